import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatProgress, startProgress, type ProgressSnapshot, type ProgressStream } from '../../src/cli/progress.js';

const snapshot: ProgressSnapshot = {
  phase: 'publishing',
  elapsedMs: 2000,
  published: 40_000,
  delivered: 33_000,
  requests: 600,
  retries: 3,
  p99Ms: 612,
};

function stream(tty: boolean, columns?: number): ProgressStream & { text: string } {
  const out = { text: '', isTTY: tty, ...(columns === undefined ? {} : { columns }) };
  return Object.assign(out, { write: (chunk: string) => (out.text += chunk) });
}

describe('formatProgress', () => {
  it('shows records published and delivered, requests, records per request, retries and p99', () => {
    expect(formatProgress(snapshot)).toBe(
      'publishing 2.0s | published 40,000 | delivered 33,000 | requests 600 (55.0 rec/req) | retries 3 | p99 612 ms',
    );
  });

  it('shows no records per request before the first request', () => {
    expect(formatProgress({ ...snapshot, requests: 0 })).toContain('requests 0 (- rec/req)');
  });
});

describe('startProgress', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('off a terminal, writes a plain line every 2 s', async () => {
    const out = stream(false);
    const progress = startProgress({ stream: out, sample: async () => snapshot });
    await vi.advanceTimersByTimeAsync(4000);
    progress.stop();
    expect(out.text).toBe(`${formatProgress(snapshot)}\n${formatProgress(snapshot)}\n`);
  });

  it('on a terminal, redraws one line in place and clears it on stop', async () => {
    const out = stream(true);
    const progress = startProgress({ stream: out, sample: async () => snapshot });
    await vi.advanceTimersByTimeAsync(500);
    progress.stop();
    const line = formatProgress(snapshot);
    expect(out.text).toBe(`\r\x1b[2K${line}\r\x1b[2K${line}\r\x1b[2K`);
    expect(out.text).not.toContain('\n');
  });

  it('on a narrow terminal, cuts the line short of the edge so it does not wrap', async () => {
    const out = stream(true, 40);
    const progress = startProgress({ stream: out, sample: async () => snapshot });
    await vi.advanceTimersByTimeAsync(250);
    progress.stop();
    expect(out.text).toBe(`\r\x1b[2K${formatProgress(snapshot).slice(0, 39)}\r\x1b[2K`);
  });

  it('writes nothing after stop, even from a sample still in flight', async () => {
    const out = stream(false);
    let release!: () => void;
    const progress = startProgress({
      stream: out,
      sample: () => new Promise<ProgressSnapshot>((resolve) => (release = () => resolve(snapshot))),
    });
    await vi.advanceTimersByTimeAsync(2000);
    progress.stop();
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(out.text).toBe('');
  });
});
