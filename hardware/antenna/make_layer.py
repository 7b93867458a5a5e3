#!/usr/bin/python3
"""Generate TacTiki's antenna-coil sensing layer as a KiCad 6 board, check it, plot it.

Why a script: the layer is 25 identical coils placed from the board file, so drawing it by
hand would copy the geometry twice; generated, the PCB follows pi_app/data/boards/tactiki.json
and hardware/antenna/coil.py, and the design rule check and the Gerbers are made the same way
every time (issue 35, item 5). The outputs are build products, not sources: they go to a build
folder (ignored by git), as the schematic's netlists should (issue 32).

Needs KiCad's Python module ``pcbnew``, which only the system Python has (Debian 12:
``apt-get install --no-install-recommends kicad``, KiCad 6.0.11)::

    /usr/bin/python3 hardware/antenna/make_layer.py [--game tactiki] [--out build/sensing-layer]

It writes OUT/GAME/: ``GAME-sensing.kicad_pcb``; ``drc.rpt`` (KiCad's own DRC report);
``gerber/`` (F.Cu, B.Cu, F.Mask, B.Mask, F.SilkS, F.Paste, Edge.Cuts),
the PTH and NPTH Excellon drill files; ``GAME-sensing-gerbers.zip`` (what a maker uploads to
a PCB fab); ``summary.json`` (DRC counts, coils, files: what the tests read). The exit status
is 1 when the DRC finds a violation or an unconnected item.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pcbnew  # type: ignore[import-not-found]  # KiCad's module, system Python only

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layout import (
    BOARD_COILS,
    CAP_PAD_MM,
    CLEARANCE_MM,
    HOLE_DRILL_MM,
    MIN_TRACK_MM,
    PAD_DIAMETER_MM,
    PAD_DRILL_MM,
    VIA_DIAMETER_MM,
    VIA_DRILL_MM,
    Coil,
    CoilLayout,
    Point,
    layer,
)

ROOT = Path(__file__).resolve().parents[2]
BOARD_THICKNESS_MM = 1.6

#: The Gerber layers a maker sends, with the file suffix KiCad gives each.
GERBER_LAYERS = [
    ("F_Cu", pcbnew.F_Cu), ("B_Cu", pcbnew.B_Cu), ("F_Mask", pcbnew.F_Mask),
    ("B_Mask", pcbnew.B_Mask), ("F_Silkscreen", pcbnew.F_SilkS), ("F_Paste", pcbnew.F_Paste),
    ("Edge_Cuts", pcbnew.Edge_Cuts),
]


def _pt(p: Point) -> Any:
    return pcbnew.wxPoint(pcbnew.FromMM(p[0]), pcbnew.FromMM(p[1]))


def _size(w: float, h: float | None = None) -> Any:
    return pcbnew.wxSize(pcbnew.FromMM(w), pcbnew.FromMM(w if h is None else h))


def _track(board: Any, a: Point, b: Point, width: float, layer_id: int,
           net: Any) -> None:
    t = pcbnew.PCB_TRACK(board)
    t.SetStart(_pt(a))
    t.SetEnd(_pt(b))
    t.SetWidth(pcbnew.FromMM(width))
    t.SetLayer(layer_id)
    t.SetNet(net)
    board.Add(t)


def _line(board: Any, a: Point, b: Point, layer_id: int, width: float = 0.1) -> None:
    s = pcbnew.PCB_SHAPE(board)
    s.SetShape(pcbnew.SHAPE_T_SEGMENT)
    s.SetStart(_pt(a))
    s.SetEnd(_pt(b))
    s.SetLayer(layer_id)
    s.SetWidth(pcbnew.FromMM(width))
    board.Add(s)


def _text(board: Any, text: str, at: Point, size: float = 1.5) -> None:
    t = pcbnew.PCB_TEXT(board)
    t.SetText(text)
    t.SetPosition(_pt(at))
    t.SetLayer(pcbnew.F_SilkS)
    t.SetTextSize(_size(size))
    t.SetTextThickness(pcbnew.FromMM(size * 0.15))
    board.Add(t)


def _footprint(board: Any, ref: str, value: str, at: Point) -> Any:
    fp = pcbnew.FOOTPRINT(board)
    fp.SetReference(ref)
    fp.SetValue(value)
    fp.SetPosition(_pt(at))
    fp.Reference().SetVisible(False)
    fp.Value().SetVisible(False)
    board.Add(fp)
    return fp


def _pad(fp: Any, number: str, at: Point, origin: Point, kind: str, net: Any | None,
         size: tuple[float, float], drill: float = 0.0) -> None:
    pad = pcbnew.PAD(fp)
    pad.SetNumber(number)
    if kind == "pth":
        pad.SetAttribute(pcbnew.PAD_ATTRIB_PTH)
        pad.SetShape(pcbnew.PAD_SHAPE_RECT if number == "1" else pcbnew.PAD_SHAPE_CIRCLE)
        pad.SetLayerSet(pad.PTHMask())
    elif kind == "npth":
        pad.SetAttribute(pcbnew.PAD_ATTRIB_NPTH)
        pad.SetShape(pcbnew.PAD_SHAPE_CIRCLE)
        pad.SetLayerSet(pad.UnplatedHoleMask())
    else:
        pad.SetAttribute(pcbnew.PAD_ATTRIB_SMD)
        pad.SetShape(pcbnew.PAD_SHAPE_ROUNDRECT)
        pad.SetRoundRectRadiusRatio(0.25)
        pad.SetLayerSet(pad.SMDMask())
    pad.SetSize(_size(*size))
    if drill:
        pad.SetDrillSize(_size(drill))
    pad.SetPos0(_pt((at[0] - origin[0], at[1] - origin[1])))
    pad.SetPosition(_pt(at))
    if net is not None:
        pad.SetNet(net)
    fp.Add(pad)


def _coil(board: Any, c: CoilLayout, index: int) -> None:
    """One cell: the spiral on F.Cu, the via, the return on B.Cu, header J and capacitor C.

    The whole coil is one net (``/a1/COIL``), both header pads included: to KiCad, copper
    joining two pads is one conductor, so giving the coil's ends two nets would be a short
    for the DRC (KiCad 6 has no "inductor track"; a net-tie footprint is the other way). At
    13.56 MHz the ends are of course not the same node: the pads are where the reader's
    matching network connects, pad 1 the spiral's outer end, pad 2 its inner end."""
    net = pcbnew.NETINFO_ITEM(board, f"/{c.cell}/COIL")
    board.Add(net)
    w = c.coil.width_mm
    for a, b in itertools.pairwise(c.spiral):
        _track(board, a, b, w, pcbnew.F_Cu, net)
    for a, b in itertools.pairwise(c.back):
        _track(board, a, b, w, pcbnew.B_Cu, net)
    via = pcbnew.PCB_VIA(board)
    via.SetViaType(pcbnew.VIATYPE_THROUGH)
    via.SetPosition(_pt(c.via))
    via.SetWidth(pcbnew.FromMM(VIA_DIAMETER_MM))
    via.SetDrill(pcbnew.FromMM(VIA_DRILL_MM))
    via.SetLayerPair(pcbnew.F_Cu, pcbnew.B_Cu)
    via.SetNet(net)
    board.Add(via)
    hdr = _footprint(board, f"J{index + 1}", f"coil {c.cell}", c.pad_a)
    for n, p in (("1", c.pad_a), ("2", c.pad_b)):
        _pad(hdr, n, p, c.pad_a, "pth", net, (PAD_DIAMETER_MM, PAD_DIAMETER_MM), PAD_DRILL_MM)
    cap = _footprint(board, f"C{index + 1}", f"tune {c.cell} (DNP)", c.cap_pads[0])
    for k, (p, pad) in enumerate(((c.cap_pads[0], c.pad_a), (c.cap_pads[1], c.pad_b)), start=1):
        _pad(cap, str(k), p, c.cap_pads[0], "smd", net, CAP_PAD_MM)
        _track(board, pad, p, w, pcbnew.F_Cu, net)
    _text(board, c.cell, (c.centre[0], c.centre[1]), 3.0)
    _text(board, f"J{index + 1}", (c.pad_b[0] + 3.0, c.pad_b[1]), 1.0)


def build(game: str, coil: Coil | None = None,
          ) -> tuple[Any, list[CoilLayout], list[Point], tuple[float, float]]:
    """The board in memory: rules, outline, coils, holes."""
    (w, h), coils, holes = layer(game, coil)
    board = pcbnew.BOARD()
    ds = board.GetDesignSettings()
    ds.SetBoardThickness(pcbnew.FromMM(BOARD_THICKNESS_MM))
    ds.m_MinClearance = pcbnew.FromMM(CLEARANCE_MM)
    ds.m_TrackMinWidth = pcbnew.FromMM(MIN_TRACK_MM)
    ds.m_ViasMinSize = pcbnew.FromMM(0.45)
    ds.m_MinThroughDrill = pcbnew.FromMM(0.2)
    ds.m_CopperEdgeClearance = pcbnew.FromMM(0.5)
    nc = ds.GetNetClasses().GetDefaultPtr()
    nc.SetClearance(pcbnew.FromMM(CLEARANCE_MM))
    nc.SetTrackWidth(pcbnew.FromMM(coils[0].coil.width_mm))
    nc.SetViaDiameter(pcbnew.FromMM(VIA_DIAMETER_MM))
    nc.SetViaDrill(pcbnew.FromMM(VIA_DRILL_MM))
    corners = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=False):
        _line(board, a, b, pcbnew.Edge_Cuts)
    for i, c in enumerate(coils):
        _coil(board, c, i)
    for i, p in enumerate(holes):
        fp = _footprint(board, f"H{i + 1}", "M3 (nylon)", p)
        _pad(fp, "", p, p, "npth", None, (HOLE_DRILL_MM, HOLE_DRILL_MM), HOLE_DRILL_MM)
    _text(board, f"tikiboard {game} sensing layer: 2 layers, 1.6 mm, 1 oz", (w / 2, h - 3.0),
          2.0)
    return board, coils, holes, (w, h)


def _drc(board: Any, path: Path) -> dict[str, int]:
    """KiCad's DRC on the saved board; the counts from its report."""
    ok = pcbnew.WriteDRCReport(board, str(path), pcbnew.EDA_UNITS_MILLIMETRES, True)
    if not ok:
        raise RuntimeError("KiCad's DRC did not run")
    text = path.read_text()
    counts = {}
    for key, pattern in (("violations", r"Found (\d+) DRC violations"),
                         ("unconnected", r"Found (\d+) unconnected pads"),
                         ("footprint_errors", r"Found (\d+) Footprint errors")):
        m = re.search(pattern, text)
        counts[key] = int(m.group(1)) if m else -1
    return counts


def _plot(board: Any, out: Path) -> list[str]:
    """Gerbers (X2 attributes) and Excellon drills for every fab layer."""
    out.mkdir(parents=True, exist_ok=True)
    pc = pcbnew.PLOT_CONTROLLER(board)
    po = pc.GetPlotOptions()
    po.SetOutputDirectory(str(out))
    po.SetPlotFrameRef(False)
    po.SetUseGerberProtelExtensions(False)
    po.SetUseGerberX2format(True)
    po.SetCreateGerberJobFile(False)  # the job file needs its own writer; fabs do without
    po.SetSubtractMaskFromSilk(True)
    po.SetUseAuxOrigin(False)
    po.SetExcludeEdgeLayer(True)
    for suffix, layer_id in GERBER_LAYERS:
        pc.SetLayer(layer_id)
        pc.OpenPlotfile(suffix, pcbnew.PLOT_FORMAT_GERBER, suffix)
        pc.PlotLayer()
    pc.ClosePlot()
    drill = pcbnew.EXCELLON_WRITER(board)
    drill.SetOptions(False, False, pcbnew.wxPoint(0, 0), False)
    drill.SetFormat(True)
    drill.CreateDrillandMapFilesSet(str(out), True, False)
    return sorted(p.name for p in out.iterdir())


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="tactiki", choices=sorted(BOARD_COILS))
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "sensing-layer")
    ap.add_argument("--coil", nargs=4, type=float, metavar=("OUTER", "TURNS", "W", "S"),
                    help="another coil than coil.py's (mm); the tests give one that does not "
                         "fit the pitch, to see the DRC fail")
    args = ap.parse_args(argv)
    coil = (Coil(args.coil[0], int(args.coil[1]), args.coil[2], args.coil[3])
            if args.coil else None)
    out: Path = args.out / args.game
    out.mkdir(parents=True, exist_ok=True)
    board, coils, holes, (w, h) = build(args.game, coil)
    pcb = out / f"{args.game}-sensing.kicad_pcb"
    pcbnew.SaveBoard(str(pcb), board)
    board = pcbnew.LoadBoard(str(pcb))  # check and plot what was written, not the memory copy
    drc = _drc(board, out / "drc.rpt")
    files = _plot(board, out / "gerber")
    zpath = out / f"{args.game}-sensing-gerbers.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
        for name in files:
            z.write(out / "gerber" / name, name)
    c = coils[0].coil
    summary = {
        "kicad": pcbnew.Version(),
        "board_mm": [w, h], "thickness_mm": BOARD_THICKNESS_MM, "copper_layers": 2,
        "coil": {"outer_mm": c.outer_mm, "turns": c.turns, "width_mm": c.width_mm,
                 "spacing_mm": c.spacing_mm, "inductance_uh": round(c.inductance_h() * 1e6, 3),
                 "c_at_13_56_mhz_pf": round(c.resonance_f() * 1e12, 1),
                 "track_length_mm": round(coils[0].length_mm(), 1)},
        "cells": [k.cell for k in coils], "holes": len(holes),
        "drc": drc, "gerber_files": files, "pcb": pcb.name, "zip": zpath.name,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{pcb}: {len(coils)} coils, DRC {drc['violations']} violations, "
          f"{drc['unconnected']} unconnected; gerbers in {out / 'gerber'}")
    return 0 if drc["violations"] == 0 and drc["unconnected"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
