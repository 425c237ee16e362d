/**
 * The faults the chaos receiver injects, how often, and the one draw that picks a request's fault.
 * Poison records (always answered 400) and the load scenario's outage are decided otherwise and
 * counted alongside, see {@link FaultCounts}.
 */
import type { Random } from './random.js';

/** Faults drawn at random, one draw per request. */
export const FAULT_KINDS = ['status500', 'status503', 'status429', 'hang', 'reset', 'slow'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Share of requests (0 to 1) that meet each fault; the sum must stay below 1. */
export type FaultRates = Readonly<Record<FaultKind, number>>;

/**
 * About one request in ten meets a fault. Hangs hold a connection for the whole headers timeout
 * and slow accepts for up to 300 ms, so they are the rarest: at 1000 requests/s they keep about
 * 3 and 5 connections busy.
 */
export const DEFAULT_FAULT_RATES: FaultRates = {
  status500: 0.02,
  status503: 0.02,
  status429: 0.02,
  hang: 0.005,
  reset: 0.015,
  slow: 0.03,
};

/** A receiver that never fails on its own (the load scenario switches it down and up instead). */
export const NO_FAULTS: FaultRates = { status500: 0, status503: 0, status429: 0, hang: 0, reset: 0, slow: 0 };

/** What the receiver did on purpose, in requests. */
export interface FaultCounts extends Record<FaultKind, number> {
  /** Answered 400 because the batch held a poison record. */
  poison: number;
  /** Answered 503 because the receiver was down (load scenario). */
  outage: number;
}

/** All zero. */
export function zeroFaultCounts(): FaultCounts {
  return { status500: 0, status503: 0, status429: 0, hang: 0, reset: 0, slow: 0, poison: 0, outage: 0 };
}

/** How the table names each fault. */
export const FAULT_LABELS: Readonly<Record<keyof FaultCounts, string>> = {
  status500: '500',
  status503: '503',
  status429: '429 + Retry-After',
  hang: 'hang past timeout',
  reset: 'reset mid-body',
  slow: 'slow accept',
  poison: '400 poison record',
  outage: '503 receiver down',
};

/** Picks a request's fault with one draw: `undefined` (answer normally) with the remaining share. */
export function pickFault(rates: FaultRates, random: Random): FaultKind | undefined {
  const draw = random();
  let upTo = 0;
  for (const kind of FAULT_KINDS) {
    upTo += rates[kind];
    if (draw < upTo) return kind;
  }
  return undefined;
}

/** Checks that the rates are shares and leave room for normal answers. */
export function validFaultRates(rates: FaultRates): boolean {
  const values = FAULT_KINDS.map((kind) => rates[kind]);
  return values.every((r) => Number.isFinite(r) && r >= 0) && values.reduce((a, b) => a + b, 0) < 1;
}
