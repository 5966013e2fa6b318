import { describe, expect, it } from 'vitest';
import { isSubjectToken, natsNames } from './index.js';

describe('natsNames', () => {
  it('gives the standard names from docs/architecture.md without a prefix', () => {
    const n = natsNames();
    expect(n.streams).toEqual({ capture: 'CAPTURE', obs: 'OBS' });
    expect(n.buckets.campaigns).toBe('shadow_campaigns');
    expect(n.buckets.budget).toBe('shadow_budget');
    expect(n.buckets.dispatch).toBe('shadow_dispatch');
    expect(n.buckets.artifacts).toBe('shadow_artifacts');
    expect(n.buckets.reports).toBe('shadow_reports');
    expect(n.buckets.flags).toBe('shadow_flags');
    expect(n.buckets.suites).toBe('shadow_suites');
    expect(n.datasets).toBe('shadow_datasets');
    expect(n.captureSkipSubject('support', 'summarize')).toBe('shadow.capture.support.summarize.skipped');
    expect(n.captureSuiteAll('support')).toBe('shadow.capture.support.>');
    expect(n.captureSubject('support', 'summarize')).toBe('shadow.capture.support.summarize');
    expect(n.captureAll).toBe('shadow.capture.>');
    expect(n.captureFilter('support')).toBe('shadow.capture.support.*');
    expect(n.obsSubject('c1')).toBe('shadow.obs.c1');
    expect(n.obsAll).toBe('shadow.obs.>');
  });

  it('isolates a prefix: streams and buckets get prefix_, subjects a leading prefix. token', () => {
    const n = natsNames('t1');
    expect(n.streams.capture).toBe('t1_CAPTURE');
    expect(n.buckets.budget).toBe('t1_shadow_budget');
    expect(n.captureSubject('s', 'c')).toBe('t1.shadow.capture.s.c');
    expect(n.captureSkipSubject('s', 'c')).toBe('t1.shadow.capture.s.c.skipped');
    expect(n.datasets).toBe('t1_shadow_datasets');
    expect(n.obsAll).toBe('t1.shadow.obs.>');
  });

  it('rejects unsafe prefixes and subject tokens', () => {
    expect(() => natsNames('a.b')).toThrow(TypeError);
    expect(() => natsNames('x'.repeat(33))).toThrow(TypeError);
    expect(() => natsNames().captureSubject('a.b', 'c')).toThrow(TypeError);
    expect(() => natsNames().obsSubject('*')).toThrow(TypeError);
    expect(() => natsNames().captureSubject('s', '>')).toThrow(TypeError);
  });

  it('isSubjectToken accepts 1–64 of [A-Za-z0-9_-] only', () => {
    expect(isSubjectToken('a-B_9')).toBe(true);
    expect(isSubjectToken('')).toBe(false);
    expect(isSubjectToken('x'.repeat(65))).toBe(false);
    expect(isSubjectToken('a b')).toBe(false);
    expect(isSubjectToken('a.b')).toBe(false);
  });

  it('the names object is frozen', () => {
    const n = natsNames();
    expect(Object.isFrozen(n)).toBe(true);
    expect(Object.isFrozen(n.buckets)).toBe(true);
  });
});
