"""The numpy side of bench/fold-cli.ts: the same fold pipeline as `shadowplane fold --bundle`, on
the same OBS JSONL file, written the way a vectorised numpy pipeline would be.

Usage: /usr/bin/python3 bench/fold_cli_numpy.py OBS.jsonl RESAMPLES SEED BUNDLE_OUT
Prints one JSON line (timings in ms, peak RSS in MB from getrusage ru_maxrss, results).

Stages (as libs/evidence): read and check each line (JSON, schema tag, the fields used);
de-duplicate observations by (call_type, item_hash, arm_id, role); weights = 1 + duplicate
events; numeric-expectation scoring (last number of the output == expected value); pair the
incumbent with each candidate on items where both are ok and priced; clusters = prompt SimHash
(exact; the synthetic data has no near-duplicates); paired cluster bootstrap (gather-sum, as
bench/fold_numpy.py) per candidate; a bundle of the per-observation cost rows and the paired rows
written as JSON with a sha256 per part.
"""
import hashlib
import json
import re
import resource
import sys
import time

import numpy as np

NUM = re.compile(r"-?\d+(?:\.\d+)?")


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def score(output, expectations):
    if output is None:
        return None
    for e in expectations:
        if e.get("kind") == "numeric":
            nums = NUM.findall(output.replace(",", ""))
            return 1.0 if nums and float(nums[-1]) == float(e["value"]) else 0.0
    return None


def bootstrap(inv, k, w, qi, qc, xi, xc, resamples, seed, chunk=50):
    sums = np.zeros((k, 4))
    sums[:, 0] = np.bincount(inv, weights=w, minlength=k)
    sums[:, 1] = np.bincount(inv, weights=w * (qc - qi), minlength=k)
    sums[:, 2] = np.bincount(inv, weights=w * xi, minlength=k)
    sums[:, 3] = np.bincount(inv, weights=w * xc, minlength=k)
    tot = sums.sum(axis=0)
    rng = np.random.default_rng(seed)
    d = np.empty(resamples)
    s = np.empty(resamples)
    for start in range(0, resamples, chunk):
        n = min(chunk, resamples - start)
        idx = rng.integers(0, k, size=(n, k))
        b = np.stack([sums[:, j][idx].sum(axis=1) for j in range(4)], axis=1)
        d[start:start + n] = b[:, 1] / b[:, 0]
        s[start:start + n] = 1.0 - b[:, 3] / b[:, 2]
    dq = np.percentile(d, [5, 95])
    sq = np.percentile(s, [5, 95])
    return {"d": [tot[1] / tot[0], dq[0], dq[1]], "s": [1.0 - tot[3] / tot[2], sq[0], sq[1]]}


def main():
    path, resamples, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    t0 = time.perf_counter()
    obs = {}
    dup = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            m = json.loads(line)
            sch = m.get("schema")
            if sch == "shadow.observation/v1":
                for k in ("item_hash", "arm_id", "role", "status", "cost", "prompt_simhash", "expectations"):
                    if k not in m:
                        raise SystemExit(f"{path}:{n}: missing {k}")
                obs.setdefault((m["call_type"], m["item_hash"], m["arm_id"], m["role"]), m)
            elif sch == "shadow.item_event/v1":
                if m["kind"] == "duplicate":
                    dup[m["item_hash"]] = dup.get(m["item_hash"], 0) + 1
            else:
                raise SystemExit(f"{path}:{n}: not an OBS message")
    t1 = time.perf_counter()
    arms = sorted({(k[2], k[3]) for k in obs})
    inc = [a for a, r in arms if r == "incumbent"][0]
    cands = [a for a, r in arms if r == "candidate"]
    items = sorted({k[1] for k in obs})
    pos = {h: i for i, h in enumerate(items)}
    n = len(items)
    w = np.ones(n)
    for h, c in dup.items():
        if h in pos:
            w[pos[h]] += c
    cols = {}
    cost_rows = []
    for a in [inc] + cands:
        q = np.full(n, np.nan)
        x = np.full(n, np.nan)
        for (ct, h, arm, role), m in obs.items():
            if arm != a or m["status"] != "ok":
                continue
            i = pos[h]
            sc = score(m.get("output_text"), m["expectations"])
            q[i] = np.nan if sc is None else sc
            usd = m["cost"]["usd"]
            x[i] = np.nan if usd is None else usd
            u = m["usage"]
            cost_rows.append([ct, a, h, m["cost"]["basis"], usd, u["input_tokens"], u["output_tokens"]])
        cols[a] = (q, x)
    sim = [obs[("math", h, inc, "incumbent")]["prompt_simhash"] for h in items]
    _, inv_all = np.unique(np.array(sim), return_inverse=True)
    t2 = time.perf_counter()
    results = []
    paired = []
    for j, c in enumerate(cands):
        qi, xi = cols[inc]
        qc, xc = cols[c]
        ok = ~(np.isnan(qi) | np.isnan(qc) | np.isnan(xi) | np.isnan(xc))
        _, inv = np.unique(inv_all[ok], return_inverse=True)
        k = int(inv.max()) + 1
        results.append(bootstrap(inv, k, w[ok], qi[ok], qc[ok], xi[ok], xc[ok], resamples, seed + j))
        idx = np.nonzero(ok)[0]
        paired.append({"candidate_arm_id": c, "rows": [
            [items[i], sim[i], float(w[i]), float(qi[i]), float(qc[i]), float(xi[i]), float(xc[i])] for i in idx]})
    t3 = time.perf_counter()
    parts = {"cost_evidence": cost_rows, "paired": paired, "stats": results}
    hashes = {}
    with open(out, "w", encoding="utf-8") as f:
        f.write("{")
        for i, (name, part) in enumerate(parts.items()):
            text = json.dumps(part, separators=(",", ":"), sort_keys=True)
            hashes[name] = hashlib.sha256(text.encode()).hexdigest()
            f.write(("," if i else "") + json.dumps(name) + ":" + text)
        f.write("," + json.dumps("hashes") + ":" + json.dumps(hashes) + "}")
    t4 = time.perf_counter()
    print(json.dumps({
        "impl": "numpy",
        "readMs": (t1 - t0) * 1e3, "foldMs": (t2 - t1) * 1e3, "bootstrapMs": (t3 - t2) * 1e3,
        "writeMs": (t4 - t3) * 1e3, "totalMs": (t4 - t0) * 1e3,
        "cpuMs": time.process_time() * 1e3, "peakRssMb": rss_mb(),
        "observations": len(obs), "items": n, "candidates": results,
    }))


if __name__ == "__main__":
    main()
