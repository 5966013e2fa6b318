/** One gated comparison from a report: candidate × call type and its decision. */
export interface GateRow {
  call_type: string;
  candidate_arm_id: string;
  state: string;
  decision: 'pass' | 'fail' | 'inconclusive' | null;
}

/** The gate outcome: pass only when every selected comparison decided `pass` on a final report. */
export interface GateResult {
  pass: boolean;
  reason: string;
  rows: GateRow[];
}

/**
 * Evaluates `--gate` on a report (`shadow.report/v1`). Rules: a provisional report never passes;
 * a report without comparisons never passes; every comparison (or only those of `candidate` when
 * given) must have decision `pass` — `fail`, `inconclusive` and unmeasurable (null) all fail the gate.
 * Source: issue 6 ("0 pass, 2 fail or inconclusive for --gate").
 */
export function evaluateGate(report: unknown, provisional: boolean, candidate?: string): GateResult {
  const rows: GateRow[] = [];
  const cts = (report as { call_types?: unknown }).call_types;
  if (Array.isArray(cts)) {
    for (const ct of cts as { call_type?: string; comparisons?: unknown }[]) {
      if (!Array.isArray(ct.comparisons)) continue;
      for (const c of ct.comparisons as {
        candidate_arm_id?: string;
        state?: string;
        decision?: GateRow['decision'];
      }[]) {
        if (candidate !== undefined && c.candidate_arm_id !== candidate) continue;
        rows.push({
          call_type: String(ct.call_type),
          candidate_arm_id: String(c.candidate_arm_id),
          state: String(c.state),
          decision: c.decision ?? null,
        });
      }
    }
  }
  if (provisional) return { pass: false, reason: 'the report is provisional', rows };
  if (rows.length === 0)
    return {
      pass: false,
      reason: candidate ? `no comparison for candidate ${candidate}` : 'the report has no comparisons',
      rows,
    };
  const bad = rows.filter((r) => r.decision !== 'pass');
  if (bad.length)
    return {
      pass: false,
      reason: bad
        .map((r) => `${r.call_type}/${r.candidate_arm_id}: ${r.decision ?? `not measured (${r.state})`}`)
        .join('; '),
      rows,
    };
  return { pass: true, reason: 'every gated comparison passed', rows };
}
