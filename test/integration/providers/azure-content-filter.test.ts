import { expect } from 'chai';
import http from 'http';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { hitsByUpstream, poolModel, poolStateOf, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

/**
 * Azure's answer when its content filter refuses a prompt: 400, `error.code` `content_filter`,
 * `innererror.code` `ResponsibleAIPolicyViolation` with a `content_filter_result` per category
 * (Azure's inference spec, `innerErrorCode`; the body as the openai client reports it from Azure).
 */
const MESSAGE = "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.";
const RESULT = { hate: { filtered: false, severity: 'safe' }, jailbreak: { filtered: false, detected: false }, self_harm: { filtered: true, severity: 'medium' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
const FILTERED = { error: { message: MESSAGE, type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: RESULT } } };

async function filteringAzure(): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(FILTERED)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, paths, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('Azure OpenAI: a content-filter refusal', () => {
  let o: TestOrg;
  let up: Awaited<ReturnType<typeof filteringAzure>>;
  let model: string;
  const spare = simDeployment('spare', { priority: 1 });
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 16 } });
    up = await filteringAzure();
    const provider = `azure-filter-${rndId()}`;
    await upsertProvider({ name: provider, kind: 'azure', base_url: up.url, api_key: 'az-key', api_version: '2024-10-21' });
    model = await poolModel([{ name: 'filtered', provider, upstream: 'gpt-4o-prod' }, spare]);
  });
  after(() => up.close());

  it('answers 400 content_filter with Azure’s message and filter results, not upstream_invalid_request', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'something filtered' }] } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('content_filter');
    expect(r.body.error.message).to.equal(MESSAGE);
    expect(r.body.error.innererror).to.deep.equal({ code: 'ResponsibleAIPolicyViolation', content_filter_result: RESULT });
    expect(r.headers.get('x-service-deployment')).to.equal('filtered');
  });

  it('is a refusal of the request, not a deployment failure: no retry on the spare, no cooldown', async () => {
    const before = up.paths.length;
    for (const stream of [false, true]) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, stream, messages: [{ role: 'user', content: 'something filtered' }] } });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error.code).to.equal('content_filter');
    }
    expect(up.paths.length - before, 'one attempt each, not retried').to.equal(2);
    expect(hitsByUpstream().get(spare.upstream) ?? 0, 'the spare tier never took it').to.equal(0);
    const [state] = await poolStateOf(model, ['filtered']);
    expect(state.coolingForMs).to.equal(0);
    expect(state.fails).to.equal(0);
  });

  it('the messages dialect says it too (invalid_request_error with the filter message)', async () => {
    const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model, max_tokens: 20, messages: [{ role: 'user', content: 'something filtered' }] } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.message).to.equal(MESSAGE);
  });
});
