import { expect } from 'chai';
import { generateApiKey, looksLikeInferenceKey, PLATFORM_PREFIX } from '../../../shared/auth/apiKeys';
import { sha256Hex } from '../../../shared/crypto';
import { laneFor, laneLimit } from '../../../shared/lanes/policy';
import { wireFromFailedReason } from '../../../shared/queues/reply-hub';
import { parseRetryAfter } from '../../../workers/providers/http';
import { ApiError, fromWire, toWire } from '../../../shared/errors/ApiError';
import type { OrgContext } from '../../../shared/tenancy/directory';

const org = (o: Partial<OrgContext>): OrgContext => ({ id: 'o', name: 'o', planName: null, laneLimits: {}, entitlements: {}, policies: {}, ...o });

describe('unit: keys, lanes, errors', () => {
  it('generates svc_ keys stored as SHA-256 with a short visible prefix', () => {
    const k = generateApiKey();
    expect(k.raw).to.match(/^svc_[0-9A-Za-z]{40}$/);
    expect(k.hash).to.equal(sha256Hex(k.raw));
    expect(k.visiblePrefix).to.equal(k.raw.slice(0, 10));
    expect(looksLikeInferenceKey(k.raw)).to.equal(true);
    const p = generateApiKey(PLATFORM_PREFIX);
    expect(p.raw.startsWith('svc_platform_')).to.equal(true);
    expect(looksLikeInferenceKey(p.raw)).to.equal(false);
    expect(looksLikeInferenceKey('svc_!!')).to.equal(false);
  });

  it('chooses the background lane only for entitled orgs', () => {
    expect(laneFor(org({ entitlements: { background: true } }), true)).to.equal('background');
    expect(laneFor(org({ entitlements: { background: false } }), true)).to.equal('interactive');
    expect(laneFor(org({}), true)).to.equal('interactive');
    expect(laneFor(org({ entitlements: { background: true } }), false)).to.equal('interactive');
  });

  it('reads lane counts from the merged org limits with a fallback', () => {
    expect(laneLimit(org({ laneLimits: { 'chat:interactive': 3 } }), 'chat', 'interactive')).to.equal(3);
    expect(laneLimit(org({}), 'chat', 'interactive', 7)).to.equal(7);
    expect(laneLimit(org({ laneLimits: { 'chat:background': 0 } }), 'chat', 'background')).to.equal(0);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2')).to.equal(2000);
    expect(parseRetryAfter(null)).to.equal(undefined);
    const d = parseRetryAfter(new Date(Date.now() + 3000).toUTCString())!;
    expect(d).to.be.within(1000, 3000);
    expect(parseRetryAfter('nonsense')).to.equal(undefined);
  });

  it('carries typed errors across the queue and maps unknown failures to worker_lost', () => {
    const e = new ApiError(429, 'x_busy', 'busy', { retryAfter: 3 });
    const back = fromWire(toWire(e));
    expect(back.status).to.equal(429);
    expect(back.headers['Retry-After']).to.equal('3');
    expect(wireFromFailedReason(JSON.stringify(toWire(e))).code).to.equal('x_busy');
    expect(wireFromFailedReason('job stalled more than allowable limit').code).to.equal('worker_lost');
    expect(wireFromFailedReason('{broken').code).to.equal('worker_lost');
  });
});
