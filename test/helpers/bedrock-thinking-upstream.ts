import http from 'http';
import crypto from 'crypto';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { eventFrame } from '../../scripts/simulator/eventstream';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import type { DeploymentSpec } from '../../shared/catalog/deployments';
import { Model } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';
import { env } from './harness';
import { buildOrg } from './factories';
import { dropScriptedModel } from './scripted-upstream';
import { signatureOf } from './thinking-upstream';

type Block = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Message = { role: string; content: Block[] };
export type ControlRequest = { method: string; path: string; headers: http.IncomingHttpHeaders };
export type Request = { path: string; body: { messages: Message[]; additionalModelRequestFields?: Record<string, any>; inferenceConfig?: Record<string, unknown>; toolConfig?: unknown } }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Converse blocks: signed reasoning (a signature bound to its text, as Anthropic's is), redacted reasoning (base64 of its bytes in the JSON protocol). */
export const signedReasoning = (text: string): Block => ({ reasoningContent: { reasoningText: { text, signature: signatureOf(text) } } });
export const REDACTED_BYTES = 'EmwKAhgBEgy3va3pzix/LafPsn4a';
export const redactedReasoning: Block = { reasoningContent: { redactedContent: REDACTED_BYTES } };

/** A turn of the model: its reasoning (sent when thinking is on), then its blocks. */
export type Turn = { think: Block[]; then: Block[]; stop: string };

/** What Bedrock refuses with Claude's thinking on: a modified signed block, a tool-using last turn that does not open with its reasoning. */
function refusal(body: Request['body'], on: boolean): string | undefined {
  for (const [i, m] of body.messages.entries()) {
    for (const b of m.content) {
      const t = b.reasoningContent?.reasoningText;
      if (t && t.signature !== signatureOf(String(t.text))) return `messages.${i}: Invalid signature in reasoning block`;
    }
  }
  const [prev, last] = body.messages.slice(-2);
  if (!on || prev?.role !== 'assistant' || !last?.content.some((b) => b.toolResult)) return undefined;
  if (prev.content[0]?.reasoningContent) return undefined;
  return `The model returned the following errors: messages.${body.messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${Object.keys(prev.content[0] ?? {})[0]}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
}

/**
 * The thinking forms AWS documents per Claude model (test/fixtures/vendor/bedrock/adaptive-thinking.md):
 * Opus 4.7 and Mythos Preview take `adaptive` only; Opus 4.6 and Sonnet 4.6 take both; older models
 * `enabled` (and `disabled`) only, refusing `adaptive` with the validation error AWS users report.
 */
function formRefusal(model: string, type: unknown): string | undefined {
  if (/claude-(opus-4-7|mythos-preview)/.test(model)) {
    if (type === 'enabled' || type === 'disabled') return `The model returned the following errors: thinking.type: "${type}" is not supported for this model. Use "thinking.type: adaptive" and "output_config.effort" to control thinking behavior.`;
  } else if (!/claude-(opus|sonnet)-4-6/.test(model) && type === 'adaptive') {
    return "The model returned the following errors: thinking: Input tag 'adaptive' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'";
  }
  return undefined;
}

/** A Converse answer's blocks as ConverseStream events: reasoning text in pieces then its signature, redacted content whole, tool use start/delta, text. */
function events(content: Block[], stop: string): Uint8Array[] {
  const out = [eventFrame('messageStart', { role: 'assistant' })];
  content.forEach((b, contentBlockIndex) => {
    const delta = (d: Block) => out.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: d }));
    const t = b.reasoningContent?.reasoningText;
    if (t) {
      const half = Math.ceil(t.text.length / 2);
      for (const piece of [t.text.slice(0, half), t.text.slice(half)]) delta({ reasoningContent: { text: piece } });
      delta({ reasoningContent: { signature: t.signature } });
    } else if (b.reasoningContent) delta({ reasoningContent: { redactedContent: b.reasoningContent.redactedContent } });
    else if (b.toolUse) {
      out.push(eventFrame('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: b.toolUse.toolUseId, name: b.toolUse.name } } }));
      delta({ toolUse: { input: JSON.stringify(b.toolUse.input) } });
    } else delta({ text: b.text });
    out.push(eventFrame('contentBlockStop', { contentBlockIndex }));
  });
  out.push(eventFrame('messageStop', { stopReason: stop }));
  out.push(eventFrame('metadata', { usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 }, metrics: { latencyMs: 5 } }));
  return out;
}

/**
 * A Bedrock Runtime endpoint (Converse and ConverseStream) whose model thinks as Claude on Bedrock does:
 * only with `additionalModelRequestFields.thinking.type` `enabled` or `adaptive` (each in the form the
 * model takes: formRefusal), each turn opening with its
 * reasoning; a request Bedrock refuses with thinking on (refusal) gets its 400 ValidationException.
 * Turn `n` (assistant turns since the last plain user turn) answers `turns[n]`.
 */
export class BedrockThinkingUpstream {
  received: Request[] = [];
  /** The control plane's requests (GetInferenceProfile) as they came: method, path, headers. */
  control: ControlRequest[] = [];
  url = '';
  private server!: http.Server;
  private models: string[] = [];
  /** Application inference profiles (their ARN) and the foundation model each serves, as Bedrock resolves them. */
  readonly profiles = new Map<string, string>();
  /** The foundation models' ARNs GetInferenceProfile lists for a profile (profile()). */
  private readonly listed = new Map<string, string[]>();
  /** Credentials (a bearer token, or a SigV4 access key id) without bedrock:GetInferenceProfile: answered 403 AccessDeniedException. */
  readonly denied = new Set<string>();

  constructor(private readonly turns: Turn[]) {}

  /**
   * An application inference profile serving `models`: Converse resolves it to the first, and
   * GetInferenceProfile lists one model in three regions (a profile copied from a cross-region
   * profile) or several models once each.
   */
  profile(arn: string, ...models: string[]): void {
    this.profiles.set(arn, models[0]);
    const regions = models.length === 1 ? ['us-east-1', 'us-east-2', 'us-west-2'] : ['us-east-1'];
    this.listed.set(arn, models.flatMap((m) => regions.map((r) => `arn:aws:bedrock:${r}::foundation-model/${m}`)));
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        if (req.method === 'GET' && req.url?.startsWith('/inference-profiles/')) this.getInferenceProfile({ method: req.method, path: req.url, headers: req.headers }, res);
        else this.answer({ path: req.url ?? '', body: JSON.parse(raw) as Request['body'] }, res);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  private answer(r: Request, res: http.ServerResponse): void {
    this.received.push(r);
    const type = r.body.additionalModelRequestFields?.thinking?.type;
    const on = type === 'enabled' || type === 'adaptive';
    const called = decodeURIComponent(r.path.split('/')[2] ?? '');
    const refused = formRefusal(this.profiles.get(called) ?? called, type) ?? refusal(r.body, on);
    if (refused) {
      res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }).end(JSON.stringify({ message: refused }));
      return;
    }
    const msgs = r.body.messages;
    let n = 0;
    for (let i = msgs.length - 1; i >= 0 && !(msgs[i].role === 'user' && !msgs[i].content.some((b) => b.toolResult)); i--) if (msgs[i].role === 'assistant') n++;
    const turn = this.turns[Math.min(n, this.turns.length - 1)];
    const content = [...(on ? turn.think : []), ...turn.then];
    if (r.path.endsWith('/converse-stream')) {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-think' });
      for (const f of events(content, turn.stop)) res.write(f);
      res.end();
      return;
    }
    const body = { output: { message: { role: 'assistant', content } }, stopReason: turn.stop, usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 }, metrics: { latencyMs: 5 } };
    res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-think' }).end(JSON.stringify(body));
  }

  /**
   * Bedrock's control plane, `GET /inference-profiles/{inferenceProfileIdentifier}` (GetInferenceProfile),
   * answered in AWS's restJson1 shape as `@aws-sdk/client-bedrock` 3.1164.0 reads it
   * (GetInferenceProfileResponse$: inferenceProfileName, description, createdAt and updatedAt as
   * date-time, inferenceProfileArn, models[].modelArn, inferenceProfileId, status, type); errors as
   * AWS sends them, the type in `x-amzn-errortype` and `{message}` in the body (the texts are
   * illustrative: AccessDeniedException 403 for a credential in `denied`, ResourceNotFoundException
   * 404 for a profile it does not know).
   */
  private getInferenceProfile(r: ControlRequest, res: http.ServerResponse): void {
    this.control.push(r);
    const arn = decodeURIComponent(r.path.slice('/inference-profiles/'.length));
    const auth = String(r.headers.authorization ?? '');
    const who = /^Bearer (.+)$/.exec(auth)?.[1] ?? /Credential=([^/]+)\//.exec(auth)?.[1] ?? '';
    const error = (status: number, type: string, message: string) =>
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-profile', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }).end(JSON.stringify({ message }));
    if (this.denied.has(who)) {
      return void error(403, 'AccessDeniedException', `User: arn:aws:iam::123456789012:user/gateway is not authorized to perform: bedrock:GetInferenceProfile on resource: ${arn} because no identity-based policy allows the bedrock:GetInferenceProfile action`);
    }
    const models = this.listed.get(arn);
    if (!models) return void error(404, 'ResourceNotFoundException', 'The specified inference profile does not exist.');
    const id = arn.split('/').pop()!;
    const body = {
      inferenceProfileName: `team-${id}`,
      description: 'An application inference profile of a team',
      createdAt: '2025-06-01T10:00:00.000Z',
      updatedAt: '2025-06-01T10:00:00.000Z',
      inferenceProfileArn: arn,
      models: models.map((modelArn) => ({ modelArn })),
      inferenceProfileId: id,
      status: 'ACTIVE',
      type: 'APPLICATION',
    };
    res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-profile' }).end(JSON.stringify(body));
  }

  /**
   * A public model (and its bedrock provider, both named `name`) on this endpoint for the given Bedrock
   * model id; with `baseModel`, `upstream` is an application inference profile serving that model
   * (the deployment's `base_model`, which this endpoint resolves as Bedrock does).
   */
  async model(name: string, upstream: string, baseModel?: string): Promise<string> {
    await this.provider(name);
    const pool = baseModel ? { deployments: [{ name, provider: name, upstream, base_model: baseModel }] } : { provider: name, upstream };
    if (baseModel) this.profiles.set(upstream, baseModel);
    await upsertModel({ id: name, ...pool, capabilities: { chat: true, tools: true }, prices: { input_token: 1, output_token: 1 } } as never);
    await bumpEpoch(env().redis);
    return name;
  }

  /** A bedrock provider on this endpoint (region us-east-1) with this secret; it and the models it serves go at close(). */
  async provider(name: string, apiKey = 'ABSKscriptedbedrockkey'): Promise<void> {
    await upsertProvider({ name, kind: 'bedrock', base_url: this.url, region: 'us-east-1', api_key: apiKey } as never);
    this.models.push(name);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
    for (const name of this.models.splice(0)) await dropScriptedModel(name);
  }
}

/** The path GetInferenceProfile is sent to for a profile's ARN (URI-encoded, as the SDK writes it), as `control` records it. */
export const profilePath = (arn: string): string => `/inference-profiles/${encodeURIComponent(arn)}`;

/** A model's pool as stored (its deployments, with the base_model the gateway filled in or not). */
export const storedPool = async (publicId: string): Promise<DeploymentSpec[]> => (await Model.findOne({ where: { publicId } }))!.deployments;

/** A Bedrock API key for the upstream's `denied` set: a credential without bedrock:GetInferenceProfile. */
export const deniedKey = (): string => `ABSK${crypto.randomBytes(12).toString('hex')}`;

/** A suite against a BedrockThinkingUpstream: the endpoint, its public models by label, an org's key and the official SDKs as clients. */
export interface BedrockThinkingSuite {
  up: BedrockThinkingUpstream;
  models: Record<string, string>;
  key: string;
  openai: OpenAI;
  anthropic: Anthropic;
}

/**
 * Registers the suite's hooks: the endpoint answering `turns`, a public model for each label of
 * `models` (a Bedrock model id, or an application inference profile's ARN and its base model), an
 * org's key and the clients made once; `received` emptied before each test; all closed after.
 */
export function bedrockThinkingSuite(turns: Turn[], models: Record<string, string | [string, string]>): BedrockThinkingSuite {
  const s = { models: {} } as BedrockThinkingSuite;
  before(async () => {
    s.up = await new BedrockThinkingUpstream(turns).start();
    for (const [label, id] of Object.entries(models)) {
      const [upstream, base] = Array.isArray(id) ? id : [id];
      s.models[label] = await s.up.model(`bedrock-${label}-${crypto.randomBytes(3).toString('hex')}`, upstream, base);
    }
    s.key = (await buildOrg(env().redis)).key;
    s.openai = new OpenAI({ apiKey: s.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    s.anthropic = new Anthropic({ apiKey: s.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(() => {
    s.up.received = [];
    s.up.control = [];
  });
  after(() => s.up.close());
  return s;
}
