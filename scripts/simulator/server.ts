import http from 'http';
import { explainListen } from '../../shared/startup/explain';
import express, { type Express } from 'express';
import { KnobStore, type Knobs } from './knobs';
import { RequestLog } from './request-log';
import { chatRoutes } from './routes/chat';
import { completionsRoutes } from './routes/completions';
import { messagesRoutes } from './routes/messages';
import { imagesRoutes } from './routes/images';
import { embeddingsRoutes } from './routes/embeddings';
import { rerankRoutes } from './routes/rerank';
import { transcriptionRoutes } from './routes/transcriptions';
import { searchRoutes } from './routes/search';
import { geminiRoutes } from './routes/gemini';
import { bedrockRoutes } from './routes/bedrock';
import { azureRoutes } from './routes/azure';

export interface Simulator {
  app: Express;
  knobs: KnobStore;
  log: RequestLog;
}

/**
 * The upstream simulator: an HTTP server speaking the real upstreams' wire formats, deterministic,
 * with failure knobs. Each operation is a route module; later issues add theirs to `routes/`.
 * Control endpoints live under `/_sim`.
 */
export function createSimulator(): Simulator {
  const app = express();
  const knobs = new KnobStore();
  const log = new RequestLog();
  app.use(express.json({ limit: '50mb' }));
  app.post('/_sim/knobs', (req, res) => {
    const { model = '*', ...k } = req.body as Knobs & { model?: string };
    knobs.set(model, k);
    res.json({ ok: true });
  });
  app.post('/_sim/release', (_req, res) => {
    knobs.release();
    res.json({ ok: true });
  });
  app.post('/_sim/reset', (_req, res) => {
    knobs.reset();
    log.entries.length = 0;
    res.json({ ok: true });
  });
  app.get('/_sim/requests', (_req, res) => res.json(log.entries));
  app.use(azureRoutes());
  app.use(chatRoutes(knobs, log));
  app.use(completionsRoutes(knobs, log));
  app.use(messagesRoutes(knobs, log));
  app.use(imagesRoutes(knobs, log));
  app.use(embeddingsRoutes(knobs, log));
  app.use(rerankRoutes(knobs, log));
  app.use(transcriptionRoutes(knobs, log));
  app.use(searchRoutes(knobs, log));
  app.use(geminiRoutes(knobs, log));
  app.use(bedrockRoutes(knobs, log));
  return { app, knobs, log };
}

export async function startSimulator(port = 0): Promise<{ sim: Simulator; server: http.Server; url: string; close(): Promise<void> }> {
  const sim = createSimulator();
  const server = http.createServer({ keepAliveTimeout: 65_000 }, sim.app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(explainListen(err, port, 'SIMULATOR_PORT')));
    server.listen(port, '127.0.0.1', resolve);
  });
  const addr = server.address() as { port: number };
  return {
    sim,
    server,
    url: `http://127.0.0.1:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (require.main === module) {
  const port = Number(process.env.SIMULATOR_PORT ?? 8090);
  void startSimulator(port).then(({ url }) => process.stdout.write(`upstream simulator on ${url}\n`));
}
