"""Routing of a placed section's nets through switches and links under capacity."""

from formulations.routing.model import (RouterConfig, RoutingResult, Overuse, ROUTERS, route_negotiated, net_network, route_model, route_default, route_milp, route_cpsat, build_routing_model, MAX_ROUTE_VARS)

__all__ = ['RouterConfig', 'RoutingResult', 'Overuse', 'ROUTERS', 'route_negotiated', 'net_network', 'route_model', 'route_default', 'route_milp', 'route_cpsat', 'build_routing_model', 'MAX_ROUTE_VARS']
