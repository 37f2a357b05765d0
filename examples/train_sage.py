#!/usr/bin/env python3
"""Train a 2-layer GraphSAGE (plain PyTorch) on a dynamic graph stored in graphsnap.

The graph is a stochastic block model generated here: --nodes nodes in
--communities planted communities (the labels), node features = a noisy
one-hot of the community, and edges that arrive in time order (each edge has
an event time; most edges stay inside a community). Training proceeds while
the graph grows: before epoch e, the next time slice of edges is ingested as
one atomic batch (a new version), the snapshot is brought forward to it, and
a sampler on the snapshot yields mini-batches (blocks in DGL's shape, input
features and seed labels gathered by the library, zero-copy into torch via
DLPack). Accuracy on held-out nodes is printed per epoch.

  python3 examples/train_sage.py                    # defaults: 3000 nodes, 6 epochs
  python3 examples/train_sage.py --nodes 20000 --epochs 10 --fanouts 10,10
  python3 examples/train_sage.py --device 0 --prefetch  # model and batches on GPU 0

Snapshot advance: the snapshot is built with sampled hop sets (the SEMHS join)
and moved to each new version by Database.advance_snapshot, which calls the
library's incremental gsnap_snapshot_advance (only the lists whose inputs
changed are recomputed); the per-epoch line prints the snapshot version.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    sys.exit("train_sage.py needs PyTorch (Debian: apt-get install python3-torch)")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import graphsnap  # noqa: E402


def make_sbm(nodes: int, communities: int, degree: float, p_in: float, feat_dim: int,
             noise: float, rng: np.random.Generator):
    """SBM edges (src, dst, t) sorted by t, labels, features."""
    labels = rng.integers(0, communities, nodes)
    members = [np.flatnonzero(labels == c) for c in range(communities)]
    m = int(nodes * degree)
    src = rng.integers(0, nodes, m)
    inside = rng.random(m) < p_in
    dst = rng.integers(0, nodes, m)
    for c in range(communities):  # replace the destination of inside edges by a member
        sel = inside & (labels[src] == c)
        dst[sel] = members[c][rng.integers(0, len(members[c]), int(sel.sum()))]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    t = np.sort(rng.integers(0, 1_000_000, len(src)))
    feats = noise * rng.standard_normal((nodes, feat_dim)).astype(np.float32)
    feats[np.arange(nodes), labels % feat_dim] += 1.0
    return src, dst, t, labels.astype(np.int64), feats


class SAGEConv(nn.Module):
    """h_dst' = W_self h_dst + W_neigh mean(h_src over the block's edges)."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, block: dict, h_src: torch.Tensor) -> torch.Tensor:
        num_dst = block["indptr"].numel() - 1
        src_pos, dst_pos = block["edge_index"]
        agg = torch.zeros(num_dst, h_src.shape[1], dtype=h_src.dtype, device=h_src.device)
        agg.index_add_(0, dst_pos, h_src[src_pos])
        deg = (block["indptr"][1:] - block["indptr"][:-1]).clamp(min=1).to(h_src.dtype)
        return self.self_lin(h_src[:num_dst]) + self.neigh_lin(agg / deg[:, None])


class SAGE(nn.Module):
    """n_layers GraphSAGE layers (d_in -> d_hidden ... -> n_classes), ReLU between."""

    def __init__(self, d_in: int, d_hidden: int, n_classes: int, n_layers: int = 2) -> None:
        super().__init__()
        dims = [d_in] + [d_hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList([SAGEConv(a, b) for a, b in zip(dims, dims[1:])])

    def forward(self, blocks: list, x: torch.Tensor) -> torch.Tensor:
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i < len(self.layers) - 1:
                h = F.relu(h)
        return h


def batch_tensors(mb: graphsnap.MiniBatch, db: graphsnap.Database, version: int,
                  dev: "torch.device"):
    """(blocks, x, y) as torch tensors on `dev`. Zero-copy through DLPack when
    the library gathered features/labels (in GPU memory already when the
    batch was staged there); else read at the snapshot's version."""
    t = mb.to_torch()
    if "features" in t:
        x, y = t["features"], t["labels"]
    else:
        x = torch.from_numpy(db.read_attr("feat", mb.input_nodes, version=version))
        y = torch.from_numpy(db.read_attr("label", mb.seeds, version=version)[:, 0])
    blocks = t["blocks"]
    if x.device != dev:  # a host batch for a GPU model: torch copies it
        blocks = [{k: v.to(dev, non_blocking=True) for k, v in b.items()} for b in blocks]
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    return blocks, x, y


def run(args: argparse.Namespace, log=print) -> dict:
    if not graphsnap.HAVE_FEATURES:
        raise SystemExit(f"train_sage.py: {graphsnap.LIBRARY_PATH} has no node attributes "
                         "(gsnap_attr_*): build a library with features/")
    if args.device >= 0 and not torch.cuda.is_available():
        raise SystemExit(f"train_sage.py: --device {args.device} needs a GPU and a CUDA build of "
                         "PyTorch (torch.cuda.is_available() is False)")
    dev = torch.device(f"cuda:{args.device}" if args.device >= 0 else "cpu")
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.threads))
    rng = np.random.default_rng(args.seed)
    src, dst, t, labels, feats = make_sbm(args.nodes, args.communities, args.degree, args.p_in,
                                          args.feat_dim, args.noise, rng)
    perm = rng.permutation(args.nodes)
    n_test = int(args.nodes * args.test_share)
    test_ids, train_ids = np.sort(perm[:n_test]), perm[n_test:]
    fanouts = [int(f) for f in args.fanouts.split(",")]
    tmp = None
    path = args.db
    if path is not None and os.path.exists(path):
        raise SystemExit(f"train_sage.py: --db {path} exists; give a new directory "
                         "(the example ingests its graph from scratch)")
    if path is None:
        tmp = tempfile.mkdtemp(prefix="train_sage.")
        path = os.path.join(tmp, "db")
    slices = np.array_split(np.arange(len(src)), args.epochs)  # time-ordered arrival
    gather = graphsnap.HAVE_GATHER
    log(f"graph: {args.nodes} nodes, {len(src)} edges in {args.epochs} time slices, "
        f"{args.communities} communities; features gathered by the "
        f"{'sampler (zero-copy)' if gather else 'Python side (library lacks gather)'}; "
        f"advance: {'incremental (gsnap_snapshot_advance)' if graphsnap.HAVE_ADVANCE else 'drop + create'}")
    model = SAGE(args.feat_dim, args.hidden, args.communities).to(dev)
    staged_on_device = None
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    history = []
    t_start = time.perf_counter()
    try:
        with graphsnap.Database(path, create=True, sync="none") as db:
            db.create_attr("feat", "float32", args.feat_dim)
            db.create_attr("label", "int64", 1)
            nodes_all = np.arange(args.nodes)
            for epoch in range(args.epochs):
                sl = slices[epoch]
                attrs = None
                if epoch == 0:  # node attributes arrive with the first edges
                    attrs = {"feat": (nodes_all, feats), "label": (nodes_all, labels)}
                version = db.ingest_edges(src[sl], dst[sl], t[sl], attrs=attrs)
                if epoch == 0:
                    snap = db.create_snapshot("train", fanouts[::-1], seed=args.seed,
                                              hop_sets="sampled" if graphsnap.HAVE_ADVANCE else "auto")
                else:
                    snap = db.advance_snapshot("train", version=version)
                kw = dict(features="feat", labels="label") if gather else {}
                with db.sampler(fanouts, snapshot="train", mode=args.mode, seed=args.seed + epoch,
                                stage=args.stage or args.prefetch or args.device >= 0,
                                device=args.device, **kw) as sampler:
                    if staged_on_device is None:
                        staged_on_device = sampler.on_device
                        if args.device >= 0:
                            log(f"model on {dev}; batches "
                                + ("staged into GPU memory by the library (pinned buffers, "
                                   "cudaMemcpyAsync), handed to torch by DLPack"
                                   if staged_on_device else
                                   "staged on host buffers (the library found no CUDA "
                                   "runtime) and copied by torch"))
                    model.train()
                    tot_loss, nb = 0.0, 0
                    for mb in sampler.iter_batches(train_ids, args.batch_size, shuffle=True,
                                                   seed=args.seed + epoch, prefetch=args.prefetch):
                        blocks, x, y = batch_tensors(mb, db, snap.at_version, dev)
                        loss = F.cross_entropy(model(blocks, x), y)
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        tot_loss += loss.detach().item()
                        nb += 1
                    model.eval()
                    correct = 0
                    with torch.no_grad():
                        for mb in sampler.iter_batches(test_ids, 1024):
                            blocks, x, y = batch_tensors(mb, db, snap.at_version, dev)
                            correct += int((model(blocks, x).argmax(1) == y).sum())
                acc = correct / max(1, len(test_ids))
                history.append(acc)
                log(f"epoch {epoch}: version {version}, snapshot version {snap.snap_version}, edges so far {sl[-1] + 1}, "
                    f"loss {tot_loss / max(nb, 1):.4f}, test accuracy {acc:.3f}")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    secs = time.perf_counter() - t_start
    log(f"final test accuracy {history[-1]:.3f} in {secs:.1f} s")
    return {"accuracy": history[-1], "history": history, "seconds": secs,
            "staged_on_device": bool(staged_on_device)}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=3000)
    p.add_argument("--communities", type=int, default=4)
    p.add_argument("--degree", type=float, default=8.0, help="edges per node (all slices)")
    p.add_argument("--p-in", type=float, default=0.8, help="share of edges inside a community")
    p.add_argument("--feat-dim", type=int, default=16)
    p.add_argument("--noise", type=float, default=1.0, help="feature noise std (signal is 1)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--fanouts", default="10,10", help="DGL order: input layer first")
    p.add_argument("--mode", default="fbl", choices=graphsnap.MODES)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--test-share", type=float, default=0.2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (1: OpenMP spinning on a loaded 2-core machine costs more than it gains)")
    p.add_argument("--stage", action="store_true", help="stage batches (pinned / GPU buffers)")
    p.add_argument("--prefetch", action="store_true",
                   help="sample the next batch on a thread while training on this one (implies --stage)")
    p.add_argument("--device", type=int, default=-1,
                   help="CUDA device for the model and the staged batches (-1: CPU)")
    p.add_argument("--db", default=None, help="database directory (default: a temporary one)")
    return p


if __name__ == "__main__":
    run(parser().parse_args())
