import { Router } from 'express';
import type { AppContext } from '../../context';
import { filesRouter } from './files';
import { openaiBatchesRouter } from './openai-batches';
import { messageBatchesRouter } from './message-batches';

/** Files, OpenAI batches and Anthropic Message Batches (docs/batches.md); the runner is workers/batch. */
export function batchesRouter(ctx: AppContext): Router {
  return Router().use(filesRouter(ctx), openaiBatchesRouter(ctx), messageBatchesRouter(ctx));
}
