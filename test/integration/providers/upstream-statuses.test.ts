import http from 'http';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { dropScriptedModel } from '../../helpers/scripted-upstream';

/** A local upstream answering every request with one status and JSON body (the vendor's documented error). */
async function failingUpstream(status: number, body: object): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits: () => hits, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

/** Upstream statuses with a vendor-specific meaning, as the caller sees them. */
describe('upstream statuses: Anthropic 529 and Azure DeploymentNotFound', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it("Anthropic's 529 overloaded_error is retried and answered as overloaded (503), not a 502 api_error; nothing billed", async function () {
    this.timeout(20_000);
    // Anthropic's documented body for 529 (docs.anthropic.com/en/api/errors)
    const up = await failingUpstream(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    await upsertProvider({ name: 'status-529', kind: 'anthropic', base_url: up.url, api_key: 'sk-ant-x' } as never);
    await upsertModel({ id: 'status-529', provider: 'status-529', upstream: 'claude-x', capabilities: { chat: true }, prices: { input_token: 1, output_token: 1 } } as never);
    await bumpEpoch(env().redis);
    try {
      await usageSettled();
      const before = await UsageEvent.count({ where: { orgId: o.org.id } });
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model: 'status-529', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(503);
      expect(r.body.error).to.include({ type: 'overloaded_error', code: 'upstream_unavailable' });
      expect(r.headers.get('retry-after')).to.match(/^\d+$/);
      expect(up.hits(), 'retried like a 503').to.be.greaterThan(1);
      const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'status-529', messages: [{ role: 'user', content: 'hi' }] } });
      expect(chat.status, chat.text).to.equal(503);
      expect(chat.body.error.code).to.equal('upstream_unavailable');
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    } finally {
      await up.close();
      await dropScriptedModel('status-529');
    }
  });

  it("Azure's 404 DeploymentNotFound is the operator's 502 upstream_error, not the caller's 400", async () => {
    // Azure OpenAI's answer for a deployment name the resource does not have
    const up = await failingUpstream(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' } });
    await upsertProvider({ name: 'status-azure-404', kind: 'azure', base_url: up.url, api_key: 'az-key', api_version: '2024-10-21' } as never);
    await upsertModel({ id: 'status-azure-404', provider: 'status-azure-404', upstream: 'missing-dep', capabilities: { chat: true, embeddings: false }, prices: { input_token: 1, output_token: 1 } } as never);
    await bumpEpoch(env().redis);
    try {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'status-azure-404', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('upstream_error');
      expect(r.body.error.message).to.include('not set up to serve this model');
    } finally {
      await up.close();
      await dropScriptedModel('status-azure-404');
    }
  });
});
