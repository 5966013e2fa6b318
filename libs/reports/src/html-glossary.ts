/** The glossary at the foot of the report page: term → plain-language definition, in page order. */
export const GLOSSARY: [string, string][] = [
  [
    'BEAT',
    'The candidate was measured against the incumbent on the same requests at the same time, is non-inferior on quality, and is better on cost or quality beyond its interval.',
  ],
  [
    'NOT_BEAT',
    'There was enough evidence to decide, and the candidate did not clear the bar (it failed, or it is inconclusive on quality or savings).',
  ],
  [
    'ON_FRONTIER',
    'The candidate is on the cost–quality frontier but was not measured side by side with the incumbent, so it cannot be called better.',
  ],
  [
    'CANNOT_MEASURE',
    'No verdict is possible, with the reason: too few paired items (fewer than 8), costs on different bases, unpriced or unscored calls, or a missing arm.',
  ],
  [
    'pass / fail / inconclusive',
    'pass: the lower end of the quality-difference interval is above −margin and the savings lower bound reaches the minimum savings. fail: the upper end is below −margin, a hard assertion broke, or a per-request cost ceiling was exceeded. Otherwise inconclusive.',
  ],
  [
    'margin',
    'The non-inferiority margin: how many percentage points (pp) of quality a candidate may lose and still pass. Pinned in the campaign spec at launch.',
  ],
  [
    'α (alpha)',
    'The one-sided error rate the campaign accepts, before it is divided among candidates (Bonferroni, α/K) and spent over repeated runs of the same comparison.',
  ],
  [
    'level',
    'The two-sided confidence level of an interval, 1 − 2·(α per comparison). A 95.0% level means intervals built this way contain the true value 95% of the time.',
  ],
  [
    'interval [a, b]',
    'The range the true value plausibly lies in at the stated level: from a paired cluster bootstrap (resampling near-duplicate clusters) for quality differences and savings; Wilson 95% for shares.',
  ],
  [
    'MDE',
    'Minimum detectable effect: the smallest quality difference (pp) these many clusters could reliably detect at 80% power. An MDE above the margin explains an inconclusive verdict.',
  ],
  ['pp', 'Percentage points of quality (quality on a 0–100% scale).'],
  [
    'basis',
    "Where a cost comes from: provider-reported (measured, from the provider's bill), rate card (derived: reported tokens × the configured price per million), estimate (characters ÷ 4, never used to rank or decide). Bases are never mixed.",
  ],
  [
    'projection',
    'A figure computed from shadow calls and an assumed volume, not money saved. Savings are realized only by switching tiers in production.',
  ],
  [
    'trust class',
    'A: quality comes only from programmatic scorers and first-party outcomes; B: an LLM judge carries up to half of the weight; C: the judge dominates.',
  ],
  [
    'A-A pair',
    "A second, independent call of the incumbent on the same request: it measures the incumbent's own run-to-run noise.",
  ],
  [
    'abandoned',
    'A successful response that carried no usage block: billed by the provider, but its tokens cannot be counted.',
  ],
  [
    'start skew',
    'How much later an arm started than the first arm for the same request. Large skew means arms did not run concurrently, so time-varying provider behaviour can differ between them.',
  ],
  [
    'cluster',
    'Near-duplicate prompts grouped together (SimHash, Hamming distance ≤ 3 of 64 bits) so repeated questions do not count as independent evidence.',
  ],
];
