"""The one walk of an import graph that both import tests use: its circles, whether the graph
is of modules (``tests/test_import_circles.py``) or of ``adapter_zoo``'s folders and top
modules (``tests/adapter_zoo/test_inner_layers.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx


def circles(edges: Mapping[str, Iterable[str]]) -> set[tuple[str, ...]]:
    """The strongly connected groups (of two nodes or more) of ``edges`` (node -> the nodes
    it imports), each a sorted tuple."""
    graph = networkx.DiGraph((node, target) for node, out in edges.items() for target in out)
    graph.add_nodes_from(edges)
    return {
        tuple(sorted(group))
        for group in networkx.strongly_connected_components(graph)
        if len(group) > 1
    }
