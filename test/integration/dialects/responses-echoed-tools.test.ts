import { expect } from 'chai';
import fs from 'fs';
import path from 'path';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';

type Json = Record<string, unknown>;

/**
 * The `tools` a Response example of the vendored OpenAI document echoes for the request tool of
 * `type` (the examples are JSON text inside the document's x-oaiMeta).
 */
function documentedEcho(type: string): Json {
  const doc = fs.readFileSync(path.resolve('test/fixtures/vendor/openai/openapi.json'), 'utf8');
  const found: Json[] = [];
  const visit = (node: unknown): void => {
    if (typeof node === 'string') {
      if (!node.trimStart().startsWith('{') || !node.includes('"object": "response"')) return;
      let r: { object?: string; tools?: Json[] };
      try {
        r = JSON.parse(node) as typeof r;
      } catch {
        return;
      }
      for (const t of r.tools ?? []) if (t.type === type) found.push(t);
    } else if (node && typeof node === 'object') for (const v of Object.values(node)) visit(v);
  };
  visit(JSON.parse(doc));
  expect(found, `a documented Response echoing a ${type} tool`).to.not.be.empty;
  return found[0];
}

/**
 * The request's tools as the Response echoes them, OpenAI's defaults filled in
 * (api/dialects/responses/response.ts, echoedTool): JSON, streamed, stored and retrieved, each a
 * Response of OpenAI's document.
 */
describe('responses: echoed tools', () => {
  let up: SearchUpstream;
  let o: TestOrg;
  let h: Record<string, string>;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'echo-search');
    h = keyHeader(o.key);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => up.close());

  /** The Response's `tools` as answered in JSON, in the stream's first and last event and by GET of the stored response: all the same. */
  async function echoed(json: Json): Promise<Json[]> {
    const r = await call('POST', '/v1/responses', { headers: h, json });
    expect(r.status, r.text).to.equal(200);
    expectOpenAI('Response', withoutNullUser(r.body));
    const got = await call('GET', `/v1/responses/${r.body.id}`, { headers: h });
    expect(got.body.tools).to.deep.equal(r.body.tools);
    const s = await postSse('/v1/responses', h, Object.assign({}, json, { stream: true }));
    expect(s.status, s.text).to.equal(200);
    const created = s.events.find((e) => e.event === 'response.created')!.data as { response: Json };
    const completed = s.events.find((e) => e.event === 'response.completed')!.data as { response: Json };
    expect(created.response.tools, 'response.created').to.deep.equal(r.body.tools);
    expect(completed.response.tools, 'response.completed').to.deep.equal(r.body.tools);
    return r.body.tools as Json[];
  }

  it('a web_search tool gets filters, search_context_size and an approximate user_location of five fields, as OpenAI echoes them', async () => {
    const [bare] = await echoed({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] });
    // OpenAI's answers (openai-node's WebSearchTool: filters, search_context_size "medium", user_location {type, city, country, region, timezone});
    // the gateway assumes no country where OpenAI's echo says "US"
    expect(bare).to.deep.equal({
      type: 'web_search',
      filters: null,
      search_context_size: 'medium',
      user_location: { type: 'approximate', city: null, country: null, region: null, timezone: null },
    });
    const [given] = await echoed({
      model: 'sim-chat',
      input: 'search for honey bees',
      tools: [{ type: 'web_search', search_context_size: 'low', filters: { allowed_domains: ['docs.example.org'] }, user_location: { type: 'approximate', country: 'GB', city: 'London' } }],
    });
    expect(given).to.deep.equal({
      type: 'web_search',
      filters: { allowed_domains: ['docs.example.org'] },
      search_context_size: 'low',
      user_location: { type: 'approximate', city: 'London', country: 'GB', region: null, timezone: null },
    });
    // a web_search location's `type` may be left out (WebSearchApproximateLocation; a web_search_preview's is required: user-location.test.ts)
    const [untyped] = await echoed({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search_2025_08_26', user_location: { timezone: 'Europe/London' } }] });
    expect(untyped).to.deep.equal({
      type: 'web_search_2025_08_26',
      filters: null,
      search_context_size: 'medium',
      user_location: { type: 'approximate', city: null, country: null, region: null, timezone: 'Europe/London' },
    });
  });

  it('a web_search_preview tool is echoed with the fields of the document’s example', async () => {
    const documented = documentedEcho('web_search_preview');
    const [preview] = await echoed({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search_preview' }] });
    // the example's `domains` is no field of WebSearchPreviewTool (nor of openai-node's type): not echoed
    expect(Object.keys(preview).sort()).to.deep.equal(Object.keys(documented).filter((k) => k !== 'domains').sort());
    expect(preview.search_context_size).to.equal(documented.search_context_size);
    expect(Object.keys(preview.user_location as Json).sort()).to.deep.equal(Object.keys(documented.user_location as Json).sort());
    expect(preview).to.deep.equal({ type: 'web_search_preview', search_context_size: 'medium', user_location: { type: 'approximate', city: null, country: null, region: null, timezone: null } });
  });

  it('a function tool always has a boolean strict (false, the mode it is run in, when not sent) and its parameters, as the document’s example', async () => {
    const documented = documentedEcho('function');
    expect(documented.strict, 'the example echoes a boolean strict').to.be.a('boolean');
    const parameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false };
    const tools = await echoed({
      model: 'sim-chat',
      input: 'hello',
      tools: [
        { type: 'function', name: 'plain', description: 'no strict sent', parameters },
        { type: 'function', name: 'strict_one', parameters, strict: true },
        { type: 'function', name: 'nullish', parameters, strict: null },
        { type: 'function', name: 'bare' },
      ],
    });
    expect(tools).to.deep.equal([
      { type: 'function', name: 'plain', description: 'no strict sent', parameters, strict: false },
      { type: 'function', name: 'strict_one', parameters, strict: true },
      { type: 'function', name: 'nullish', parameters, strict: false },
      { type: 'function', name: 'bare', parameters: null, strict: false },
    ]);
    for (const t of tools) expect(Object.keys(t)).to.include.members(Object.keys(documented).filter((k) => k !== 'description'));
    // the official client reads them as its FunctionTool
    const r = await client.responses.create({ model: 'sim-chat', input: 'hello', tools: [{ type: 'function', name: 'plain', parameters, strict: null }] });
    const fn = r.tools[0] as OpenAI.Responses.FunctionTool;
    expect(fn.strict).to.equal(false);
  });

  it('a namespace always has its description (NamespaceToolParam requires one): "" when not sent', async () => {
    const members = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }];
    const tools = await echoed({ model: 'sim-chat', input: 'hello', tools: [{ type: 'namespace', name: 'crm', tools: members }, { type: 'namespace', name: 'web', description: null, tools: members }] });
    expect(tools).to.deep.equal([
      { type: 'namespace', name: 'crm', description: '', tools: members },
      { type: 'namespace', name: 'web', description: '', tools: members },
    ]);
  });

  it('other tools are echoed as sent', async () => {
    const tools = [{ type: 'custom', name: 'apply_patch', description: 'patch' }, { type: 'local_shell' }];
    expect(await echoed({ model: 'sim-chat', input: 'hello', tools })).to.deep.equal(tools);
  });
});
