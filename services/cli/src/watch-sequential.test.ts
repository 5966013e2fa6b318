import { describe, expect, it } from 'vitest';
import { sequentialLines } from './watch.js';

describe('shadowctl campaign watch: sequential lines', () => {
  it('shows each candidate’s running interval, and the look and items where it settled', () => {
    const lines = sequentialLines({
      call_types: [
        {
          call_type: 'gsm8k',
          comparisons: [
            {
              candidate_arm_id: 'small',
              sequential: {
                looks: 3,
                decision: 'fail',
                settled_look: 3,
                items_used: 75,
                quality_delta: { lower: -1, upper: -0.214 },
                cost_savings: { lower: 0.5, upper: 1 },
              },
            },
            {
              candidate_arm_id: 'medium',
              sequential: {
                looks: 4,
                decision: 'continue',
                settled_look: null,
                items_used: 100,
                quality_delta: { lower: -0.081, upper: 1 },
                cost_savings: null,
              },
            },
            { candidate_arm_id: 'tiny' },
          ],
        },
      ],
    });
    expect(lines).toEqual([
      'sequential gsm8k/small: quality [-100.0, -21.4]pp  savings [50.0, 100.0]%; settled fail at look 3 (75 items)',
      'sequential gsm8k/medium: quality [-8.1, 100.0]pp; open after 4 looks (100 items)',
      'sequential gsm8k/tiny: no look yet (too few pairs)',
    ]);
  });
  it('group_sequential: names how many of the planned looks were taken', () => {
    const lines = sequentialLines({
      call_types: [
        {
          call_type: 'gsm8k',
          comparisons: [
            {
              candidate_arm_id: 'medium',
              sequential: {
                looks: 2,
                decision: 'continue',
                settled_look: null,
                items_used: 60,
                quality_delta: { lower: -0.3, upper: 0.1 },
                cost_savings: null,
                planned_looks: [25, 50, 75, 100],
              },
            },
          ],
        },
      ],
    });
    expect(lines).toEqual([
      'sequential gsm8k/medium: quality [-30.0, 10.0]pp; open after 2 of 4 planned looks (60 items)',
    ]);
  });
  it('prints nothing for a report without call types', () => {
    expect(sequentialLines({})).toEqual([]);
  });
});
