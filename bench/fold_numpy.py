"""The numpy side of bench/fold.ts: the same fold and paired cluster bootstrap, same data file.

Usage: /usr/bin/python3 bench/fold_numpy.py FILE RESAMPLES SEED [gather|multinomial]
Prints one JSON line (timings in ms, peak RSS in MB from getrusage ru_maxrss, results).

Algorithm (as libs/stats pairedClusterBootstrap): per-cluster sums of w, w*(qc-qi), w*xi, w*xc;
per resample draw k cluster indices uniformly with replacement and sum the cluster sums;
D = sum(w*d)/sum(w), S = 1 - sum(w*xc)/sum(w*xi); type-7 percentiles (numpy default) at 5/95.
 - gather: rng.integers(0, k, (chunk, k)) then fancy-index and sum (the literal algorithm);
 - multinomial: the draw's counts per cluster (rng.multinomial) @ the k x 4 sums matrix (BLAS).
"""
import json
import resource
import sys
import time

import numpy as np

COLUMNS = 8  # cluster, weight, q0, q1, q2, x0, x1, x2


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bootstrap(inv, k, w, qi, qc, xi, xc, resamples, seed, mode, chunk=50):
    sums = np.zeros((k, 4))
    sums[:, 0] = np.bincount(inv, weights=w, minlength=k)
    sums[:, 1] = np.bincount(inv, weights=w * (qc - qi), minlength=k)
    sums[:, 2] = np.bincount(inv, weights=w * xi, minlength=k)
    sums[:, 3] = np.bincount(inv, weights=w * xc, minlength=k)
    tot = sums.sum(axis=0)
    rng = np.random.default_rng(seed)
    d = np.empty(resamples)
    s = np.empty(resamples)
    pvals = np.full(k, 1.0 / k)
    for start in range(0, resamples, chunk):
        n = min(chunk, resamples - start)
        if mode == "gather":
            idx = rng.integers(0, k, size=(n, k))
            b = np.stack([sums[:, j][idx].sum(axis=1) for j in range(4)], axis=1)
        else:
            counts = rng.multinomial(k, pvals, size=n).astype(np.float64)
            b = counts @ sums
        d[start:start + n] = b[:, 1] / b[:, 0]
        s[start:start + n] = 1.0 - b[:, 3] / b[:, 2]
    dq = np.percentile(d, [5, 95])
    sq = np.percentile(s, [5, 95])
    return {
        "d": [tot[1] / tot[0], dq[0], dq[1]],
        "s": [1.0 - tot[3] / tot[2], sq[0], sq[1]],
    }


def main():
    path, resamples, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "gather"
    baseline = rss_mb()
    t0 = time.perf_counter()
    raw = np.fromfile(path, dtype="<f8")
    n = raw.size // COLUMNS
    cl, w, q0, q1, q2, x0, x1, x2 = (raw[j * n:(j + 1) * n] for j in range(COLUMNS))
    t1 = time.perf_counter()
    # The fold: weighted sums per arm; cluster ids -> dense indices in order of first appearance
    # (same numbering as libs/stats).
    sum_w = w.sum()
    qs, xs = [q0, q1, q2], [x0, x1, x2]
    mean_q = [float((w * q).sum() / sum_w) for q in qs]
    cost = [float((w * x).sum()) for x in xs]
    uniq, first, inv = np.unique(cl, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inv = rank[inv]
    k = uniq.size
    t2 = time.perf_counter()
    cands = [bootstrap(inv, k, w, q0, qs[a], x0, xs[a], resamples, seed + a - 1, mode) for a in (1, 2)]
    t3 = time.perf_counter()
    print(json.dumps({
        "impl": "numpy-" + mode,
        "readMs": (t1 - t0) * 1e3,
        "foldMs": (t2 - t1) * 1e3,
        "bootstrapMs": (t3 - t2) * 1e3,
        "totalMs": (t3 - t0) * 1e3,
        "cpuMs": time.process_time() * 1e3,
        "baselineRssMb": baseline,
        "peakRssMb": rss_mb(),
        "fold": {"sumW": float(sum_w), "meanQ": mean_q, "costUsd": cost},
        "candidates": cands,
    }))


if __name__ == "__main__":
    main()
