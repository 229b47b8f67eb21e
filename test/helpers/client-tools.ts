import OpenAI from 'openai';
import { env, resetSim } from './harness';
import { buildOrg } from './factories';
import { chunk, ScriptedUpstream, usageChunk } from './scripted-upstream';
import { expectResponsesEvent, responsesEventForDocument } from './conformance';

/** The tests of a client-run tool (apply_patch, shell, local_shell): a scripted OpenAI-compatible upstream, a model on it, and the SDK on the gateway for an org. */
export interface ClientToolSuite {
  up: ScriptedUpstream;
  model: string;
  client: OpenAI;
}

/** Registers the suite's hooks (a fresh simulator and script per test; the upstream, model and org made once); the fields are set once `before` ran. */
export function clientToolSuite(): ClientToolSuite {
  const s = {} as ClientToolSuite;
  beforeEach(resetSim);
  beforeEach(() => s.up.reset());
  before(async () => {
    s.up = await ScriptedUpstream.start('openai');
    s.model = await s.up.model();
    s.client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => s.up.close());
  return s;
}

/**
 * A client-run tool's call streamed through the SDK's ResponseStream: the upstream is scripted to
 * stream some text, then the call (`{id, function: {name, arguments}}`) with its arguments in two
 * halves. Answers the final Response, every event (each checked against OpenAI's document) and the
 * events of the call (output index 1).
 */
export async function streamTextThenCall(
  up: ScriptedUpstream,
  client: OpenAI,
  params: Omit<OpenAI.Responses.ResponseCreateParamsStreaming, 'stream'>,
  call: { id: string; function: { name: string; arguments: string } },
): Promise<{ final: OpenAI.Responses.Response; events: OpenAI.Responses.ResponseStreamEvent[]; forCall: OpenAI.Responses.ResponseStreamEvent[] }> {
  const args = call.function.arguments;
  const half = Math.floor(args.length / 2);
  up.next.push({
    kind: 'sse',
    events: [
      chunk({ role: 'assistant', content: 'Looking.' }),
      chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: args.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(),
    ],
  });
  const stream = client.responses.stream(params);
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  stream.on('event', (e) => events.push(e));
  const final = await stream.finalResponse();
  for (const e of events) expectResponsesEvent(responsesEventForDocument(e as unknown as Record<string, unknown>));
  return { final, events, forCall: events.filter((e) => 'output_index' in e && e.output_index === 1) };
}
