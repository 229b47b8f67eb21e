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

type Tools = NonNullable<MessagesRequest['tools']>;

/**
 * A messages request that declares web_search_* / web_fetch_20250910: run on the gateway's search
 * rails whatever the model's upstream (the server tools never go upstream as they are), answered
 * with Anthropic's native blocks, JSON or streamed.
 */
export async function answerNative(ctx: AppContext, req: Request, res: Response, body: MessagesRequest, resolved: ResolvedModel, set: NativeToolSet, rest: Tools): Promise<void> {
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
  const publicModel = resolved.requestedId;
  const id = messageId();
  const loop = { resolved, canonical, tools: set, rails };
  if (body.stream !== true) {
    const t = await runNativeLoop(ctx, req, res, loop);
    res.json(transcriptToMessage(t, unfolded.reruns, publicModel, id, rails.orgId));
    return;
  }
  const sse = new SseWriter(res);
  const w = new NativeMessagesStream(publicModel, id, rails.orgId);
  const send = (events: ReturnType<NativeMessagesStream['push']>) => {
    for (const ev of events) sse.send(JSON.stringify(ev), ev.type);
  };
  try {
    const t = await runNativeLoop(ctx, req, res, { ...loop, onStep: (s) => send(w.push(s)), onText: (d) => send(w.text(d)) });
    send(w.end(t, unfolded.reruns));
    sse.end();
  } catch (err) {
    streamError(sse, err);
  }
}
