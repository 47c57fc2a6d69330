"""Routing of a placed section's nets through switches and links under capacity."""

from formulations.routing.model import (MAX_ROUTE_VARS, REGION_MARGIN, RouteNet,
                                        build_routing_model, route_model, route_nets)
from formulations.routing.negotiated import route_negotiated
from formulations.routing.problem import (FabricView, Overuse, RouterConfig, RoutingResult,
                                          net_network)
from formulations.routing.routers import ROUTERS

__all__ = ["RouterConfig", "RoutingResult", "Overuse", "FabricView", "ROUTERS",
           "route_negotiated", "net_network", "route_model", "build_routing_model", "route_nets",
           "RouteNet", "MAX_ROUTE_VARS", "REGION_MARGIN"]
