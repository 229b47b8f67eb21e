import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * A number JSON cannot hold (`1e309` parses to Infinity, which JSON.stringify writes as `null`) in a
 * numeric field of every dialect: refused with 400 naming the field, never sent on as `null`, nothing
 * billed (docs/hardening.md).
 */
describe('numbers JSON parses to Infinity, in every dialect\'s numeric fields', function () {
  this.timeout(60_000);
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);
  const cases: Array<[string, string, string[]]> = [
    ['/v1/chat/completions', '{"model":"sim-chat","messages":[{"role":"user","content":"hi"}],', ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'n', 'seed', 'top_logprobs', 'frequency_penalty', 'presence_penalty']],
    ['/v1/completions', '{"model":"sim-chat","prompt":"hi",', ['temperature', 'top_p', 'max_tokens', 'n', 'seed', 'frequency_penalty', 'presence_penalty']],
    ['/v1/messages', '{"model":"sim-claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}],', ['temperature', 'top_p', 'top_k', 'max_tokens']],
    ['/v1/responses', '{"model":"sim-chat","input":"hi",', ['temperature', 'top_p', 'max_output_tokens', 'top_logprobs', 'max_tool_calls']],
    ['/v1/embeddings', '{"model":"sim-embed","input":"hi",', ['dimensions']],
    ['/v2/rerank', '{"model":"sim-rerank","query":"q","documents":["a","b"],', ['top_n', 'max_tokens_per_doc']],
  ];
  for (const [path, head, fields] of cases) {
    it(`${path}: ${fields.join(', ')}`, async () => {
      for (const f of fields) {
        for (const value of ['1e309', '-1e309']) {
          const res = await fetch(`${env().gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...keyHeader(o.key) }, body: `${head}"${f}":${value}}` });
          const text = await res.text();
          expect(res.status, `${f}=${value}: ${text}`).to.equal(400);
          expect(text, `${f}=${value}`).to.include(f);
          expect(env().sim.log.entries, `${f}=${value}: nothing sent upstream`).to.have.length(0);
        }
      }
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
    });
  }

  it('/v1/completions: within OpenAI\'s ranges it is served (a seed beyond 2^53 included)', async () => {
    const res = await fetch(`${env().gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...keyHeader(o.key) }, body: '{"model":"sim-chat","prompt":"hi","top_p":1,"n":1,"seed":18446744073709551615,"frequency_penalty":-2,"presence_penalty":2}' });
    expect(res.status, await res.text()).to.equal(200);
  });
});
