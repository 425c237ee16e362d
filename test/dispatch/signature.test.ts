import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ErrorCode, InvalidArgumentError } from '../../src/errors.js';
import { parseSigningSecret, sign, verifySignature, webhookHeaders } from '../../src/dispatch/signature.js';

// The example from the Standard Webhooks reference libraries' test suite.
const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SPEC_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SPEC_TIMESTAMP = 1614265330;
const SPEC_BODY = '{"test": 2432232314}';
const SPEC_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const OLD_SECRET = `whsec_${Buffer.from('the previous key, rotating out').toString('base64')}`;
const NOW_MS = SPEC_TIMESTAMP * 1000;

/** HMAC computed here, independently of the module under test. */
function expectedSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function signedHeaders(secrets: readonly string[] = [SPEC_SECRET]): Record<string, string> {
  const headers = webhookHeaders({ id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY, secrets });
  return { ...headers };
}

function verify(overrides: Partial<Parameters<typeof verifySignature>[0]> = {}): boolean {
  return verifySignature({ secret: SPEC_SECRET, headers: signedHeaders(), body: SPEC_BODY, now: () => NOW_MS, ...overrides });
}

describe('sign', () => {
  it('matches the Standard Webhooks example exactly', () => {
    expect(sign({ id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY, secrets: [SPEC_SECRET] })).toBe(SPEC_SIGNATURE);
  });

  it('is HMAC-SHA256 over "id.timestamp.body" under the decoded key', () => {
    const body = '[{"customer":"c1","n":1}]';
    expect(sign({ id: 'batch_1', timestamp: 1700000000, body, secrets: [OLD_SECRET] })).toBe(
      expectedSignature(OLD_SECRET, 'batch_1', 1700000000, body),
    );
  });

  it('signs a Uint8Array body exactly as the same string', () => {
    const body = '{"name":"Zoë ✓"}';
    const options = { id: SPEC_ID, timestamp: SPEC_TIMESTAMP, secrets: [SPEC_SECRET] };
    expect(sign({ ...options, body: new TextEncoder().encode(body) })).toBe(sign({ ...options, body }));
  });

  it('emits one signature per secret during a rotation, current first', () => {
    const header = sign({ id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY, secrets: [SPEC_SECRET, OLD_SECRET] });
    expect(header.split(' ')).toEqual([SPEC_SIGNATURE, expectedSignature(OLD_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY)]);
  });

  it.each([
    ['an empty id', { id: '' }, 'id'],
    ['a fractional timestamp', { timestamp: 1.5 }, 'timestamp'],
    ['a negative timestamp', { timestamp: -1 }, 'timestamp'],
    ['no secrets', { secrets: [] }, 'secrets'],
  ])('rejects %s', (_, override, argument) => {
    const options = { id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY, secrets: [SPEC_SECRET], ...override };
    expect(() => sign(options)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument }));
  });
});

describe('webhookHeaders', () => {
  it('carries id, timestamp and signature when there are secrets', () => {
    expect(signedHeaders()).toEqual({
      'webhook-id': SPEC_ID,
      'webhook-timestamp': String(SPEC_TIMESTAMP),
      'webhook-signature': SPEC_SIGNATURE,
    });
  });

  it('omits the signature when there are no secrets', () => {
    const headers = webhookHeaders({ id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY });
    expect(headers).toEqual({ 'webhook-id': SPEC_ID, 'webhook-timestamp': String(SPEC_TIMESTAMP) });
    expect(webhookHeaders({ id: SPEC_ID, timestamp: SPEC_TIMESTAMP, body: SPEC_BODY, secrets: [] })).toEqual(headers);
  });
});

describe('parseSigningSecret', () => {
  it('decodes the base64 key after the whsec_ prefix', () => {
    expect(parseSigningSecret(SPEC_SECRET)).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
  });

  it.each([
    ['a bare base64 key', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['an empty key', 'whsec_'],
    ['an empty string', ''],
    ['a key that is not base64', 'whsec_not base64!'],
    ['a key with a bad length', 'whsec_abcde'],
  ])('rejects %s with InvalidArgumentError', (_, secret) => {
    let thrown: unknown;
    try {
      parseSigningSecret(secret);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect(thrown).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', argument: 'signingSecret' });
  });
});

describe('verifySignature', () => {
  it('accepts a request signed with the secret', () => {
    expect(verify()).toBe(true);
  });

  it('accepts the Standard Webhooks example header', () => {
    const headers = { 'webhook-id': SPEC_ID, 'webhook-timestamp': String(SPEC_TIMESTAMP), 'webhook-signature': SPEC_SIGNATURE };
    expect(verify({ headers })).toBe(true);
  });

  it('accepts a WHATWG Headers object and a plain object with any-case names', () => {
    expect(verify({ headers: new Headers(signedHeaders()) })).toBe(true);
    const upper = Object.fromEntries(Object.entries(signedHeaders()).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verify({ headers: upper })).toBe(true);
  });

  it('accepts a Uint8Array body', () => {
    expect(verify({ body: new TextEncoder().encode(SPEC_BODY) })).toBe(true);
  });

  it('passes with either secret while a rotation is under way', () => {
    const headers = signedHeaders([SPEC_SECRET, OLD_SECRET]);
    expect(verify({ headers, secret: SPEC_SECRET })).toBe(true);
    expect(verify({ headers, secret: OLD_SECRET })).toBe(true);
    expect(verify({ headers: signedHeaders([OLD_SECRET]), secret: [SPEC_SECRET, OLD_SECRET] })).toBe(true);
  });

  it('finds the v1 signature among unknown versions and bad entries', () => {
    const headers = { ...signedHeaders(), 'webhook-signature': `v2,${'A'.repeat(44)} v1,short  ${SPEC_SIGNATURE}` };
    expect(verify({ headers })).toBe(true);
  });

  it('fails for another secret', () => {
    expect(verify({ secret: OLD_SECRET })).toBe(false);
  });

  it('fails when the body, id or timestamp was tampered with', () => {
    expect(verify({ body: SPEC_BODY.replace('2', '3') })).toBe(false);
    expect(verify({ headers: { ...signedHeaders(), 'webhook-id': 'msg_other' } })).toBe(false);
    expect(verify({ headers: { ...signedHeaders(), 'webhook-timestamp': String(SPEC_TIMESTAMP + 1) } })).toBe(false);
  });

  it('fails when the timestamp is outside the tolerance, either way', () => {
    expect(verify({ now: () => NOW_MS + 300_000 })).toBe(true);
    expect(verify({ now: () => NOW_MS + 301_000 })).toBe(false);
    expect(verify({ now: () => NOW_MS - 301_000 })).toBe(false);
    expect(verify({ now: () => NOW_MS + 301_000, toleranceSeconds: 600 })).toBe(true);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('fails when %s is missing', (name) => {
    const headers: Record<string, string> = signedHeaders();
    delete headers[name];
    expect(verify({ headers })).toBe(false);
  });

  it.each([
    ['a timestamp that is not a number', { 'webhook-timestamp': 'yesterday' }],
    ['an empty signature', { 'webhook-signature': '' }],
    ['a signature without a version', { 'webhook-signature': SPEC_SIGNATURE.slice(3) }],
    ['a truncated signature', { 'webhook-signature': 'v1,' }],
  ])('returns false, without throwing, for %s', (_, override) => {
    expect(verify({ headers: { ...signedHeaders(), ...override } })).toBe(false);
  });

  it('returns false for a repeated header', () => {
    expect(verify({ headers: { ...signedHeaders(), 'webhook-id': [SPEC_ID, 'msg_other'] } })).toBe(false);
  });

  it('throws InvalidArgumentError for a malformed secret, even when headers are missing', () => {
    expect(() => verify({ secret: 'not-a-secret', headers: {} })).toThrow(InvalidArgumentError);
    expect(() => verify({ secret: [] })).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'secret' }));
    expect(() => verify({ toleranceSeconds: -1 })).toThrow(expect.objectContaining({ argument: 'toleranceSeconds' }));
  });
});
