import { Router } from 'express';
import type { AppContext } from '../context';
import { authenticate } from '../middleware/authenticate';
import { jsonBody } from '../middleware/body';
import { modelsRouter } from './models/router';
import { chatRouter } from './chat/router';
import { messagesRouter } from './messages/router';
import { responsesRouter } from './responses/router';
import { imagesRouter } from './images/router';
import { embeddingsRouter } from './embeddings/router';
import { audioRouter } from './audio/router';
import { systemoneRouter } from './systemone/router';
import { mcpRouter } from './mcp/router';
import { searchRouter } from './search/router';
import { batchesRouter } from './batches/router';
import { conversationsRouter } from './conversations/router';
import { cohereChatRouter } from './cohere-chat/router';

/**
 * Every inference route, behind one authentication step. Mounted at the root and under each
 * path-authentication prefix. Each family adds its router here.
 */
export function inferenceRouter(ctx: AppContext): Router {
  const r = Router();
  r.use(authenticate(ctx));
  r.use(chatRouter(ctx)); // first: the hottest paths match without walking every other family's routes
  r.use(modelsRouter(ctx));
  r.use(batchesRouter(ctx)); // files, batches, message batches (before messages: /v1/messages/batches)
  r.use(messagesRouter(ctx)); // reads its own body (before the shared parser) for its error envelope
  r.use(imagesRouter(ctx)); // reads its own bodies (JSON with an image-sized cap, multipart)
  r.use(embeddingsRouter(ctx)); // reads its own body with the 2 MiB embeddings cap
  r.use(audioRouter(ctx)); // multipart, streamed to the spool (before the shared parser)
  r.use(systemoneRouter(ctx)); // reads its own body: 8 MiB cap, no compression, slow-body timeout
  r.use(searchRouter(ctx)); // POST /v1/alpha/search, own 64 KiB JSON parser
  r.use(mcpRouter(ctx)); // the hosted MCP server at /mcp, own JSON parser
  r.use(jsonBody('20mb'), responsesRouter(ctx));
  r.use(conversationsRouter(ctx)); // OpenAI's Conversations API (its body parsed by the line above)
  r.use(cohereChatRouter(ctx)); // Cohere's /v2/chat (body parsed above)
  return r;
}
