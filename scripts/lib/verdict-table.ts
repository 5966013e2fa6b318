/**
 * Prints the verdict table of a report (contracts `Report`): one row per call type × arm with
 * quality, cost per request (with its basis), the paired intervals and the decision.
 */
export function printVerdictTable(report: any, say: (line: string) => void): void {
  const pct = (x: number | null | undefined, d = 1) =>
    x === null || x === undefined || Number.isNaN(x) ? '—' : `${(100 * x).toFixed(d)}%`;
  const pp = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  const usd = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `$${x.toFixed(6)}`);
  const header = [
    'call type',
    'arm',
    'model',
    'quality',
    'cost/request',
    'Δquality pp [interval]',
    'projected savings [interval] (basis)',
    'verdict',
  ];
  const rows: string[][] = [];
  for (const ct of report?.call_types ?? []) {
    for (const arm of ct.arms ?? []) {
      const cmp = (ct.comparisons ?? []).find((c: any) => c.candidate_arm_id === arm.arm_id);
      const q = arm.quality?.mean;
      const quality =
        q === null || q === undefined
          ? `unscored (${arm.quality?.n_unscored ?? 0})`
          : `${pct(q)} (n=${arm.quality.n_scored})`;
      const cost = `${usd(arm.cost?.per_request_mean_usd)} ${arm.cost?.basis ?? ''}`.trim();
      let dq = arm.role === 'incumbent' ? 'reference' : '—';
      let sv = arm.role === 'incumbent' ? 'reference' : '—';
      let verdict = arm.role === 'incumbent' ? 'incumbent' : '—';
      if (cmp) {
        const s = cmp.stats;
        if (s) {
          dq = `${pp(s.quality_delta.point)} [${pp(s.quality_delta.lower)}, ${pp(s.quality_delta.upper)}]`;
          sv = s.cost_savings
            ? `${pct(s.cost_savings.point)} [${pct(s.cost_savings.lower)}, ${pct(s.cost_savings.upper)}] (${cmp.basis ?? '?'})`
            : `— (${s.cost_savings_null_reason ?? 'unknown'})`;
        }
        verdict =
          cmp.state === 'CANNOT_MEASURE'
            ? `CANNOT_MEASURE (${cmp.cannot_measure?.reason ?? '?'})`
            : `${cmp.decision ?? '?'} · ${cmp.state}`;
      }
      rows.push([ct.call_type, arm.arm_id, arm.model, quality, cost, dq, sv, verdict]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  say(line(header));
  say(widths.map((w) => '─'.repeat(w)).join('  '));
  for (const r of rows) say(line(r));
  say('savings are projections from shadow calls on the stated cost basis, not realized savings');
  const words: string[] = report?.verdict_text ?? [];
  if (words.length) {
    say('');
    for (const w of words) say(`• ${w}`);
  }
}

/**
 * The sequential stopping record of each comparison (spec `stopping: sequential`): when each
 * candidate settled, the items it used and the items saved against max_items. Prints nothing for
 * a fixed-n report.
 */
export function printSequential(report: any, say: (line: string) => void): void {
  const rows: string[] = [];
  for (const ct of report?.call_types ?? [])
    for (const c of ct.comparisons ?? []) {
      const s = c.sequential;
      if (!s) continue;
      const when =
        s.settled_look === null
          ? `not settled after ${s.looks} looks (${s.items_used} items)`
          : `${s.decision} at look ${s.settled_look} of ${s.looks}, after ${s.items_used} paired items`;
      rows.push(
        `  ${ct.call_type}/${c.candidate_arm_id}: ${when}; ${s.items_paired} of max_items ${s.max_items} paired, ${s.items_saved} not paid for`,
      );
    }
  if (rows.length === 0) return;
  say(
    'sequential stopping (anytime-valid; every arm is paid for until every candidate is settled; "not paid for" counts items a decided stop saved, or that traffic never brought):',
  );
  for (const r of rows) say(r);
}

/**
 * The LLM judge per call type: its verdicts and spend there, and for each comparison the trust
 * class with the judge's weight share (from the composite weights: A without judge, B at most
 * half, C judge-dominated), then the calibration a class B or C verdict rests on — the call
 * type's own kappa, else the report's (measured on the items that also have programmatic scores
 * or first-party outcomes, e.g. GSM8K's expectations), else why there is none. Prints nothing
 * for a report without a judge.
 */
export function printJudgeByCallType(report: any, say: (line: string) => void): void {
  if (!report?.judge) return;
  const k = (x: any) => `kappa ${x.value.toFixed(3)} [${x.lower.toFixed(3)}, ${x.upper.toFixed(3)}] on ${x.n} items`;
  for (const ct of report.call_types ?? []) {
    const j = ct.judge;
    if (!j) continue;
    const classes = (ct.comparisons ?? [])
      .map(
        (c: any) =>
          `${c.candidate_arm_id} ${c.trust_class ?? '—'}${typeof c.judge_weight_share === 'number' ? ` (judge weight share ${c.judge_weight_share.toFixed(2)})` : ''}`,
      )
      .join(', ');
    const cal = j.kappa
      ? `${k(j.kappa)} of this call type`
      : report.judge.kappa
        ? `${k(report.judge.kappa)} of the report (here: ${j.kappa_none_reason ?? 'no kappa'})`
        : `no kappa: ${j.kappa_none_reason ?? report.judge.kappa_none_reason ?? 'unknown'}`;
    say(
      `  judge on ${ct.call_type}: ${j.scored}/${j.verdicts} verdicts scored, $${Number(j.spend_usd).toFixed(4)}; trust class ${classes || '—'}; ${cal}`,
    );
  }
}
