import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { Model, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,advanced-tool-use-2025-11-20,effort-2025-11-24';
const cached = { type: 'ephemeral' };
const schema = { type: 'object', properties: { command: { type: 'string' } } };

/** The fields Claude Code 2.1.x sends on its first request (captured from `claude -p`, trimmed). */
const claudeCode = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 512,
  system: [
    { type: 'text', text: 'You are a Claude agent.' },
    { type: 'text', text: 'Use the tools.', cache_control: cached },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: '<system-reminder>env</system-reminder>' }, { type: 'text', text: 'say hello agents' }] },
    { role: 'system', content: [{ type: 'text', text: '# Environment\ncwd /tmp', cache_control: cached }] },
  ],
  tools: [
    { name: 'Bash', description: 'Runs a command', input_schema: schema, cache_control: cached },
    { name: 'Cron', description: 'Schedules a prompt', input_schema: schema, defer_loading: true },
  ],
  metadata: { user_id: '{"session_id":"s1"}' },
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'high' },
  ...extra,
});

type Sent = Record<string, unknown> & { messages: Array<Record<string, unknown>> };

async function billedCount(orgId: string): Promise<number> {
  await usageSettled();
  return UsageEvent.count({ where: { orgId } });
}

/** Claude Code's requests on the messages dialect: every model, both upstream kinds (issue 27 §3). */
describe('messages dialect: the fields coding agents send', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA };
  });

  it('Anthropic-native upstream: the request and its anthropic-beta features are passed on unchanged', async () => {
    const req = claudeCode('sim-claude');
    const r = await call('POST', '/v1/messages?beta=true', { headers: { ...h, 'anthropic-beta': ` ${BETA.replace(/,/g, ', ')} ` }, json: req });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ type: 'message', model: 'sim-claude' });
    const [sent] = env().sim.log.entries;
    expect(sent.path).to.equal('/v1/messages');
    expect(sent.anthropicBeta).to.equal(BETA);
    expect(sent.body).to.deep.equal({ ...req, model: 'sim-claude-1' });
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(1);
  });

  it('OpenAI-compatible upstream: system messages fold into the system prompt in order, effort becomes reasoning_effort, hints have no effect', async () => {
    const r = await call('POST', '/v1/messages', { headers: h, json: claudeCode('sim-chat') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content[0].text).to.include('say hello agents');
    const [sent] = env().sim.log.entries;
    expect(sent.anthropicBeta, 'betas tune an Anthropic upstream only').to.equal(undefined);
    const body = sent.body as Sent;
    expect(body.messages).to.deep.equal([
      { role: 'system', content: 'You are a Claude agent.\nUse the tools.\n\n# Environment\ncwd /tmp' },
      { role: 'user', content: '<system-reminder>env</system-reminder>\nsay hello agents' },
    ]);
    expect(body.reasoning_effort).to.equal('high');
    expect((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name), 'a deferred tool is offered directly').to.deep.equal(['Bash', 'Cron']);
    for (const hint of ['thinking', 'context_management', 'output_config', 'cache_control', 'defer_loading', 'metadata']) expect(JSON.stringify(body)).not.to.include(`"${hint}"`);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(1);
  });

  it('streams on both upstream kinds with the same request', async () => {
    for (const model of ['sim-claude', 'sim-chat']) {
      const s = await postSse('/v1/messages', h, claudeCode(model, { stream: true }));
      expect(s.status, `${model}: ${s.text}`).to.equal(200);
      expect(s.events.map((e) => e.data.type)).to.include.members(['message_start', 'message_delta', 'message_stop']);
      const text = s.events.filter((e) => e.data.type === 'content_block_delta' && e.data.delta.type === 'text_delta').map((e) => e.data.delta.text).join('');
      expect(text, model).to.include('say hello agents');
    }
  });

  it('translated upstream: a tool-search server tool leaves every tool offered directly; a JSON output format becomes response_format', async () => {
    // closed and every property required: Anthropic's structured outputs need it closed (api/routes/messages/strict-schemas.ts), OpenAI's strict mode all required (else it goes strict: false, workers/providers/openai/strict-fallback.ts)
    const fmt = { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } };
    const r = await call('POST', '/v1/messages', {
      headers: h,
      json: claudeCode('sim-chat', { tools: [{ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }, ...claudeCode('x').tools], output_config: { effort: 'low', format: fmt } }),
    });
    expect(r.status, r.text).to.equal(200);
    const body = env().sim.log.entries[0].body as Sent;
    expect((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).to.deep.equal(['Bash', 'Cron']);
    expect(body.reasoning_effort).to.equal('low');
    expect(body.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'output', schema: fmt.schema, strict: true } });
    const beta = await call('POST', '/v1/messages', { headers: h, json: claudeCode('sim-chat', { output_config: undefined, output_format: fmt }) });
    expect(beta.status, beta.text).to.equal(200);
    expect((env().sim.log.entries[1].body as Sent).response_format, "the beta's output_format").to.deep.equal({ type: 'json_schema', json_schema: { name: 'output', schema: fmt.schema, strict: true } });
  });

  it("leaves reasoning_effort out for a model whose config says its upstream refuses it (both dialects)", async () => {
    const base = (await Model.findOne({ where: { publicId: 'sim-chat' } }))!;
    const m = await Model.create({ publicId: 'sim-chat-no-effort', providerId: base.providerId, upstreamName: base.upstreamName, displayName: null, capabilities: { chat: true }, contextWindow: 32_000, maxOutputTokens: 4_096, config: { reasoning_effort: false } });
    env().gw.ctx.catalog.invalidate();
    try {
      const r = await call('POST', '/v1/messages', { headers: h, json: claudeCode('sim-chat-no-effort') });
      expect(r.status, r.text).to.equal(200);
      const resp = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat-no-effort', input: 'hi', reasoning: { effort: 'high' } } });
      expect(resp.status, resp.text).to.equal(200);
      const sent = env().sim.log.entries.map((e) => e.body as Record<string, unknown>);
      expect(sent).to.have.length(2);
      for (const b of sent) expect(b).not.to.have.property('reasoning_effort');
    } finally {
      await m.destroy();
      env().gw.ctx.catalog.invalidate();
    }
  });

  it('count_tokens counts system-role messages', async () => {
    const base = claudeCode('sim-claude');
    const without = { ...base, messages: base.messages.slice(0, 1) };
    const a = await call('POST', '/v1/messages/count_tokens', { headers: h, json: without });
    const b = await call('POST', '/v1/messages/count_tokens', { headers: h, json: base });
    expect(a.status, a.text).to.equal(200);
    expect(b.status, b.text).to.equal(200);
    expect(b.body.input_tokens).to.be.greaterThan(a.body.input_tokens + 3);
  });

  it('refuses what is malformed, before any upstream call or billing', async () => {
    const before = await billedCount(o.org.id);
    const cases: Array<[Record<string, string>, unknown, string]> = [
      [h, claudeCode('sim-chat', { messages: [{ role: 'system', content: 'only a system message' }] }), 'invalid_request'],
      [h, claudeCode('sim-chat', { messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }), 'invalid_request'],
      [h, claudeCode('sim-chat', { output_config: { effort: 'extreme' } }), 'invalid_request'],
      [h, claudeCode('sim-chat', { output_config: { format: { type: 'json_schema' } } }), 'invalid_request'],
      [{ ...h, 'anthropic-beta': 'good-2025-01-01, bad value!' }, claudeCode('sim-claude'), 'invalid_request'],
    ];
    for (const [headers, json, code] of cases) {
      const r = await call('POST', '/v1/messages', { headers, json });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ code, type: 'invalid_request_error' });
      expect(r.text).not.to.match(/\bat \w+ \(/);
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billedCount(o.org.id)).to.equal(before);
  });

  it("refuses a thinking config Anthropic's ThinkingConfigParam refuses (a budget under 1,024, an unknown type or display), on every upstream and count_tokens, before any upstream call or billing; valid ones are answered", async () => {
    const before = await billedCount(o.org.id);
    const cases: Array<[unknown, string]> = [
      // Anthropic's words (llm.js issue 30, LibreChat issue 8346)
      [{ type: 'enabled', budget_tokens: 1000 }, 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'],
      [{ type: 'enabled' }, "'thinking.budget_tokens' is required"],
      [{ type: 'enabled', budget_tokens: 2048.5 }, "'thinking.budget_tokens' must be an integer"],
      [{ type: 'on' }, "'thinking.type' must be one of [enabled, adaptive, disabled, between_tools]"],
      [{ type: 'adaptive', display: 'full' }, "'thinking.display' must be one of [summarized, omitted, null]"],
    ];
    for (const [thinking, message] of cases) {
      for (const [path, model] of [['/v1/messages', 'sim-chat'], ['/v1/messages', 'sim-claude'], ['/v1/messages/count_tokens', 'sim-chat']]) {
        const r = await call('POST', path, { headers: h, json: claudeCode(model, { thinking, max_tokens: 4096 }) });
        expect(r.status, `${path} ${model} ${JSON.stringify(thinking)}: ${r.text}`).to.equal(400);
        expect(r.body.error).to.deep.equal({ code: 'invalid_request', type: 'invalid_request_error', message });
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billedCount(o.org.id)).to.equal(before);
    for (const thinking of [{ type: 'enabled', budget_tokens: 1024 }, { type: 'adaptive', display: null }, { type: 'disabled' }, { type: 'between_tools' }]) {
      const r = await call('POST', '/v1/messages', { headers: h, json: claudeCode('sim-chat', { thinking, max_tokens: 4096 }) });
      expect(r.status, `${JSON.stringify(thinking)}: ${r.text}`).to.equal(200);
    }
  });

  it("refuses a thinking budget at or above max_tokens as Anthropic does (400 invalid_request_error, its words), on every upstream, JSON and streamed, before any upstream call or billing; the interleaved-thinking beta (Claude Code's) lets it exceed max_tokens", async () => {
    const before = await billedCount(o.org.id);
    const message = '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    // no beta, or betas without interleaved thinking
    for (const beta of [undefined, 'claude-code-20250219,effort-2025-11-24']) {
      const headers = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01', ...(beta ? { 'anthropic-beta': beta } : {}) };
      for (const [budget, max] of [[4096, 4096], [8192, 4096], [1024, 1024]]) {
        for (const model of ['sim-chat', 'sim-claude']) {
          for (const stream of [false, true]) {
            const what = `${model} budget ${budget} max ${max} stream ${stream} beta ${beta}`;
            const json = claudeCode(model, { thinking: { type: 'enabled', budget_tokens: budget }, max_tokens: max, stream });
            const r = stream ? await postSse('/v1/messages', headers, json) : await call('POST', '/v1/messages', { headers, json });
            expect(r.status, `${what}: ${r.text}`).to.equal(400);
            expect(JSON.parse(r.text).error, what).to.deep.equal({ code: 'invalid_request', type: 'invalid_request_error', message });
          }
        }
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billedCount(o.org.id)).to.equal(before);
    // below max_tokens, or with the interleaved-thinking beta (`h` is Claude Code's header): answered on both upstream kinds
    const plain = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
    for (const [headers, budget, max] of [[plain, 4095, 4096], [h, 8192, 4096], [h, 4096, 4096]] as const) {
      for (const model of ['sim-chat', 'sim-claude']) {
        const r = await call('POST', '/v1/messages', { headers, json: claudeCode(model, { thinking: { type: 'enabled', budget_tokens: budget }, max_tokens: max }) });
        expect(r.status, `${model} budget ${budget} max ${max}: ${r.text}`).to.equal(200);
      }
    }
    // the native bypass passes the budget on as it was sent
    expect(env().sim.log.entries.filter((e) => e.path === '/v1/messages').map((e) => (e.body as { thinking: unknown }).thinking)).to.deep.include({ type: 'enabled', budget_tokens: 8192 });
  });
});
