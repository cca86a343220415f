"""Draw a lineage as SVG: ancestors above the record, descendants below.

Each record has one box: a record reached a second time (two packets derived
from one source, a thread that joins) gets a second edge to the box it has, not
a second box. The lineage's tree (each record where it was first reached) gives
the layered layout: each branch one row further from the record, leaves side by
side in the order the tree lists them, a parent centred over its children; the
other edges are drawn over it, their labels at their middles. It is worked out
in two passes over the branches, without recursion, in time linear in what is
drawn. Every piece of record text goes through ``escape``: nothing from the
repository can become markup in the picture.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from ..queries.lineage import branches_in_order
from ..text import shown

KIND_COLOURS = {
    "packet": "#dbeafe",
    "response": "#dcfce7",
    "message": "#fef9c3",
    "notification": "#fde68a",
    "visit": "#e9d5ff",
    "visitor": "#fbcfe8",
    "tag": "#e5e7eb",
    "handoff_packet": "#fed7aa",
}
MISSING_COLOUR = "#dc2626"
LINE_COLOUR = "#6b7280"
# Sizes in pixels: a character of the 10 px font is about 6 px wide.
CHAR = 6.0
MAX_CHARS = 44  # a longer label is cut, whole in the box's tooltip
ROW = 96  # from one row of boxes to the next
GAP = 24  # between boxes side by side
BOX_HEIGHT = 48
MARGIN = 16


@dataclass
class _Box:
    lines: list[str]
    tooltip: str
    url: str | None
    row: int  # 0 the record, negative above it, positive below
    parent: int | None  # index of the box it hangs from
    via: str = ""  # the fields of the edge to the parent
    style: str = "node"  # node, start, missing, more
    fill: str = "#ffffff"
    children: list[int] = field(default_factory=list)
    x: float = 0.0


def _cut(text: str) -> str:
    """A label that fits its box: a long one cut in the middle, since the end of
    an ID or a path is what tells two apart (``...-review-11-msg-07``)."""
    text = shown(text)  # control characters are not even XML
    if len(text) <= MAX_CHARS:
        return text
    head = (MAX_CHARS - 1) // 2
    return text[:head] + "…" + text[-(MAX_CHARS - 1 - head) :]


@dataclass
class _Edge:
    """An edge beside the tree's: from box ``parent`` to the box a record
    reached again already has, with the fields that lead there."""

    parent: int
    box: int
    via: str
    up: bool  # among the ancestors: the edge runs from the record reached again


def _boxes(tree: dict[str, Any], url_for: Callable[[str], str]) -> tuple[list[_Box], list[_Edge]]:
    """The boxes of a lineage in drawing order, parents before their children, one
    a record; and the edges to a record reached again, which the tree leaves out."""

    def record_lines(node: dict[str, Any]) -> list[str]:
        status = [f"[{node['status']}]"] if node.get("status") else []
        return [str(node.get("kind") or "?"), _cut(str(node.get("label") or "?")), *status]

    start = _Box(
        record_lines(tree),
        tree["node"],
        url_for(tree["node"]),
        0,
        None,
        style="start",
        fill=KIND_COLOURS.get(tree.get("kind") or "", "#ffffff"),
    )
    boxes, edges = [start], []
    for direction, step in (("up", -1), ("down", 1)):
        parent_of = {id(b): 0 for b in tree.get(direction, [])}
        # Each record's box on this side (the record's own, on both): a record
        # both above and below it is in a cycle, and drawn on each side.
        placed = {tree["node"]: 0}
        for b in branches_in_order(tree.get(direction, [])):
            parent = parent_of[id(b)]
            row = boxes[parent].row + step
            via = ", ".join(b["via"])
            again = None if b.get("missing") else placed.get(b["node"])
            if again is not None:
                edges.append(_Edge(parent, again, via, up=step < 0))
                for child in b["children"]:
                    parent_of[id(child)] = again
                # The record's box may have come from a sighting that said less
                # (its repeat, met first): what is not drawn still leads on.
                owner = boxes[again]
                if b["more"] and not any(boxes[c].style == "more" for c in owner.children):
                    _add_more(boxes, again, b["more"], step)
                continue
            if b.get("missing"):
                box = _Box(
                    [f"MISSING {b['expected']}", _cut(str(b["label"])), f"({via})"],
                    f"not in the index: {b['label']}",
                    None,
                    row,
                    parent,
                    via,
                    style="missing",
                )
            else:
                box = _Box(
                    record_lines(b),
                    b["node"],
                    url_for(b["node"]),
                    row,
                    parent,
                    via,
                    fill=KIND_COLOURS.get(b.get("kind") or "", "#ffffff"),
                )
                placed[b["node"]] = len(boxes)
            boxes.append(box)
            boxes[parent].children.append(len(boxes) - 1)
            for child in b["children"]:
                parent_of[id(child)] = len(boxes) - 1
            if b["more"]:  # what is not drawn, leading on to the node's own lineage
                _add_more(boxes, len(boxes) - 1, b["more"], step)
        if tree.get(f"{direction}_more"):  # the start's own branches beyond the drawing
            _add_more(boxes, 0, tree[f"{direction}_more"], step)
    return boxes, edges


def _place(boxes: list[_Box], width: float) -> None:
    """x of every box: leaves side by side in tree order, parents centred over
    their children, each side of the record centred on it."""
    slot = width + GAP
    for side in (-1, 1):
        order = [i for i, b in enumerate(boxes) if b.row * side > 0]
        top = [i for i in boxes[0].children if boxes[i].row == side]
        # Leaves left to right in tree order, a walk of the children lists (a box
        # can gain a child after others were drawn: a "+N more" of a record met
        # again), with a stack of its own, never recursion.
        walked, stack, leaves = [], list(reversed(top)), 0
        while stack:
            i = stack.pop()
            walked.append(i)
            if boxes[i].children:
                stack.extend(reversed(boxes[i].children))
            else:
                boxes[i].x = leaves * slot
                leaves += 1
        for i in reversed(walked):  # children before their parents
            kids = boxes[i].children
            if kids:
                boxes[i].x = (boxes[kids[0]].x + boxes[kids[-1]].x) / 2
        if top:  # centre this side's first row on the record
            shift = -(boxes[top[0]].x + boxes[top[-1]].x) / 2
            for i in order:
                boxes[i].x += shift
    left = min(b.x for b in boxes)
    for b in boxes:
        b.x += MARGIN - left


def _add_more(boxes: list[_Box], owner: int, count: int, step: int) -> None:
    """A "+N more" box below (or above) box ``owner``, leading on to its lineage."""
    box = boxes[owner]
    more = _Box([f"+{count} more"], box.tooltip, box.url, box.row + step, owner)
    more.style = "more"
    boxes.append(more)
    box.children.append(len(boxes) - 1)


def lineage_svg(tree: dict[str, Any], url_for: Callable[[str], str]) -> str:
    """The SVG of a lineage tree, each record's box a link made by ``url_for``."""
    boxes, edges = _boxes(tree, url_for)
    longest = max(len(line) for b in boxes for line in b.lines)
    width = max(120.0, longest * CHAR + 16)
    _place(boxes, width)
    top = min(b.row for b in boxes)
    rows = max(b.row for b in boxes) - top + 1

    def y(box: _Box) -> float:
        return MARGIN + (box.row - top) * ROW

    svg_width = max(b.x for b in boxes) + width + MARGIN
    svg_height = MARGIN * 2 + (rows - 1) * ROW + BOX_HEIGHT
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{svg_width:.0f}" '
        f'height="{svg_height:.0f}" viewBox="0 0 {svg_width:.0f} {svg_height:.0f}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="10" role="img">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{LINE_COLOUR}"/>'
        "</marker></defs>",
    ]
    meets = _meeting_points(boxes, width)
    for n, box in enumerate(boxes[1:], 1):  # edges first, under the boxes
        parent = boxes[box.parent or 0]
        at, mine = meets[n], box.x + width / 2
        if box.row < parent.row:  # an ancestor: its edge comes down into the parent
            x1, y1, x2, y2 = mine, y(box) + BOX_HEIGHT, at, y(parent)
            label_y = y1 + 14
        else:
            x1, y1, x2, y2 = at, y(parent) + BOX_HEIGHT, mine, y(box)
            label_y = y2 - 8
        dash = ' stroke-dasharray="5,3"' if box.style in ("missing", "more") else ""
        colour = MISSING_COLOUR if box.style == "missing" else LINE_COLOUR
        out.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + 30:.1f} {x2:.1f},{y2 - 30:.1f} '
            f'{x2:.1f},{y2:.1f}" fill="none" stroke="{colour}"{dash} marker-end="url(#arrow)"/>'
        )
        if box.via:
            out.append(
                f'<text x="{mine + 4:.1f}" y="{label_y:.1f}" font-size="11" '
                f'fill="#374151">{escape(shown(box.via))}</text>'
            )
    for edge in edges:  # a record reached again: an edge to the box it has
        # Arrows run as the tree's do: from a source to what derives from it.
        source, target = boxes[edge.parent], boxes[edge.box]
        if edge.up:
            source, target = target, source
        x1, x2 = source.x + width / 2, target.x + width / 2
        if target.row > source.row:  # below: bottom to top
            y1, y2, bend1, bend2 = y(source) + BOX_HEIGHT, y(target), 40, -40
        elif target.row < source.row:  # above: top to bottom
            y1, y2, bend1, bend2 = y(source), y(target) + BOX_HEIGHT, -40, 40
        else:  # one row: bottom to bottom, curving under the row
            y1 = y2 = y(source) + BOX_HEIGHT
            bend1 = bend2 = 40
        out.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend1:.1f} {x2:.1f},{y2 + bend2:.1f} '
            f'{x2:.1f},{y2:.1f}" fill="none" stroke="{LINE_COLOUR}" marker-end="url(#arrow)"/>'
        )
        if edge.via:
            out.append(
                f'<text x="{(x1 + x2) / 2 + 4:.1f}" y="{(y1 + y2) / 2:.1f}" font-size="11" '
                f'fill="#374151">{escape(shown(edge.via))}</text>'
            )
    for box in boxes:
        out.append(_box_svg(box, y(box), width))
    out.append("</svg>")
    return "\n".join(out)


def _meeting_points(boxes: list[_Box], width: float) -> dict[int, float]:
    """Where each box's edge meets its parent: a parent's children on one side
    spread along it in order, and each edge's label sits at the child's end, so
    no two of them overlap. One pass: a record may have thousands of missing
    references, each a child of its own."""
    sides: dict[tuple[int, int], list[int]] = defaultdict(list)
    for n, box in enumerate(boxes[1:], 1):
        sides[(box.parent or 0, box.row)].append(n)
    meets = {}
    for (parent, _), children in sides.items():
        for k, n in enumerate(children, 1):
            meets[n] = boxes[parent].x + width * k / (len(children) + 1)
    return meets


def _box_svg(box: _Box, top: float, width: float) -> str:
    x = box.x
    title = f"<title>{escape(shown(box.tooltip))}</title>"
    if box.style == "more":
        text = escape(box.lines[0])
        shape = (
            f'<text x="{x + width / 2:.1f}" y="{top + BOX_HEIGHT / 2 + 4:.1f}" '
            f'text-anchor="middle">{text}</text>'
        )
    else:
        stroke = {
            "start": 'stroke="#111827" stroke-width="2.5"',
            "missing": f'stroke="{MISSING_COLOUR}" stroke-dasharray="5,3"',
        }.get(box.style, 'stroke="#374151"')
        fill = "#ffffff" if box.style == "missing" else box.fill
        colour = ' fill="#b91c1c"' if box.style == "missing" else ""
        step = BOX_HEIGHT / (len(box.lines) + 1)
        lines = "".join(
            f'<text x="{x + width / 2:.1f}" y="{top + step * (n + 1) + 3:.1f}" '
            f'text-anchor="middle"{colour}>{escape(line)}</text>'
            for n, line in enumerate(box.lines)
        )
        shape = (
            f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" height="{BOX_HEIGHT}" '
            f'rx="6" fill="{fill}" {stroke}/>{lines}'
        )
    # The record the picture is of: the page scrolls it into view when it opens.
    where = ' id="labnote-start"' if box.style == "start" else ""
    if box.url is None:
        return f"<g{where}>{title}{shape}</g>"
    return f'<a{where} href="{escape(box.url)}" target="_top">{title}{shape}</a>'
