import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { ResolvedModel } from '../../../shared/catalog/catalog';
import type { NativeToolSet } from '../../dispatch/native-search/tools';
import { nativeRails, runNativeLoop } from '../../dispatch/native-search/loop';
import { SseWriter } from '../../sse';
import { messagesToCanonical, type MessagesRequest } from '../../dialects/messages/request';
import { forModel } from '../../dialects/canonical';
import { messageId } from '../../dialects/messages/response';
import { transcriptToMessage, unfoldServerBlocks, withFunctionTools } from '../../dialects/messages/native';
import { NativeMessagesStream } from '../../dialects/messages/native-stream';
import { streamError } from './stream-error';
import { billedAnswer } from './no-resend';
import { pingWhenQuiet } from './ping';
import type { CompactEdit } from '../../dialects/messages/compaction';
import { MessagesStreamTranslator, type MessagesEvent } from '../../dialects/messages/stream';
import { CountedStart, inputEstimate } from './counted-start';
import { compactionIfDue, pausedAnswer, withCompaction, type MessagesCompaction } from './compaction';

type Tools = NonNullable<MessagesRequest['tools']>;

/**
 * A messages request that declares web_search_* / web_fetch_20250910: run on the gateway's search
 * rails whatever the model's upstream (the server tools never go upstream as they are), answered
 * with Anthropic's native blocks, JSON or streamed.
 */
export async function answerNative(ctx: AppContext, req: Request, res: Response, body: MessagesRequest, resolved: ResolvedModel, set: NativeToolSet, rest: Tools, compact?: CompactEdit): Promise<void> {
  if (body.stream !== true) return answer(ctx, req, res, body, resolved, set, rest, compact, undefined);
  const sse = new SseWriter(res);
  // a `ping` after a quiet spell from here on (ping.ts), the earlier turns' re-runs and a compaction pass included;
  // a failure after one is the in-band error event
  pingWhenQuiet(sse);
  try {
    await answer(ctx, req, res, body, resolved, set, rest, compact, sse);
  } catch (err) {
    streamError(sse, err);
  }
}

async function answer(ctx: AppContext, req: Request, res: Response, body: MessagesRequest, resolved: ResolvedModel, set: NativeToolSet, rest: Tools, compact: CompactEdit | undefined, sse: SseWriter | undefined): Promise<void> {
  const rails = nativeRails(ctx, req, set);
  const abort = new AbortController();
  const onClose = () => !res.writableFinished && abort.abort();
  res.on('close', onClose);
  let unfolded: Awaited<ReturnType<typeof unfoldServerBlocks>>;
  try {
    unfolded = await unfoldServerBlocks(body, set, rails, abort.signal);
  } finally {
    res.off('close', onClose);
  }
  const canonical = forModel(messagesToCanonical(withFunctionTools(body, rest, set, unfolded.messages)), resolved.model.config);
  // the caller's `thinking` rides on the canonical request (messagesToCanonical) to the deployment each turn picks; each turn's signed blocks go back with it (loop.ts)
  const publicModel = resolved.requestedId;
  const id = messageId();
  // Anthropic's compaction before the loop (compaction.ts): its pass is the request's first job
  const compacted = await compactionIfDue(ctx, req, res, resolved, canonical, compact);
  if (compacted && compact!.pause) return answerPaused(res, sse, compacted, publicModel);
  const loop = { resolved, canonical, tools: set, rails, jobsBefore: compacted ? 1 : 0 };
  if (!sse) {
    const t = await runNativeLoop(ctx, req, res, loop);
    const message = transcriptToMessage(t, unfolded.reruns, publicModel, id, rails.orgId);
    res.json(billedAnswer(res, compacted ? withCompaction(message, compacted, t.usage, publicModel) : message));
    return;
  }
  const w = new NativeMessagesStream(publicModel, id, rails.orgId);
  const sendEvent = (ev: MessagesEvent) => sse.send(JSON.stringify(ev), ev.type);
  // message_start's input_tokens as count_tokens counts the request (counted-start.ts); after a compaction its message_start is out already
  const counted = compacted ? undefined : new CountedStart((signal) => inputEstimate(resolved.model.tokenizer, body, 0, signal), sendEvent);
  const send = (events: MessagesEvent[]) => (counted ? counted.push(events) : events.forEach(sendEvent));
  if (compacted) send(w.compaction(compacted.summary, compacted.usage));
  let t: Awaited<ReturnType<typeof runNativeLoop>>;
  try {
    t = await runNativeLoop(ctx, req, res, { ...loop, onStep: (s) => send(w.push(s)), onText: (d) => send(w.text(d)), onThinking: (b) => send(w.thinking(b)) });
  } finally {
    await counted?.settle();
  }
  send(w.end(t, unfolded.reruns));
  sse.end();
}

/** `pause_after_compaction`: the compaction block alone, JSON or streamed (compaction.ts). */
function answerPaused(res: Response, sse: SseWriter | undefined, compacted: MessagesCompaction, publicModel: string): void {
  if (!sse) return void res.json(billedAnswer(res, pausedAnswer(compacted, publicModel)));
  const t = new MessagesStreamTranslator(publicModel);
  for (const ev of [...t.compaction(compacted.summary, compacted.usage), ...t.end(true)]) sse.send(JSON.stringify(ev), ev.type);
  sse.end();
}
