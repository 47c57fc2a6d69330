"""The RDU target: its compiler levels in order, inside the feedback loop.

One module per part of the flow:

* :mod:`~pipeline.rdu.flow` -- the run (:func:`map_rdu`): the levels, the performance
  estimate, mapping.json's fields;
* :mod:`~pipeline.rdu.levels` -- the levels: the section cut, stage-buffer balancing,
  placement and routing with the independent check, and their shared state;
* :mod:`~pipeline.rdu.buffers_pass` -- one section's balancing, checked and simulated;
* :mod:`~pipeline.rdu.section_pass` -- one section's order, placement and routing;
* :mod:`~pipeline.rdu.section_task` -- a section's work as a task any worker can run;
* :mod:`~pipeline.rdu.twins` -- sections of one shape, compiled once.

The feedback loop itself (:mod:`pipeline.feedback`) and where batches run
(:mod:`pipeline.cluster`) are shared with the other targets.
"""

from pipeline.rdu.flow import map_rdu, may_use_workers

__all__ = ["map_rdu", "may_use_workers"]
