import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults } from '../faults';
import { lexicalScores } from '../vectors';

/**
 * Cohere v2 rerank (`POST /v2/rerank`): BM25 lexical scores, sorted, `top_n` applied, search units
 * billed; with the `bareRerank` knob, unsorted, all documents, no billed units.
 */
export function rerankRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post('/v2/rerank', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const model = String(body.model ?? '');
    const k = knobs.take(model);
    if (await applyFaults(k, res)) return;
    const { query, documents, top_n: topN } = body;
    if (typeof query !== 'string' || !query) return void res.status(400).json({ message: 'invalid request: query must be a non-empty string' });
    if (!Array.isArray(documents) || documents.length === 0 || !documents.every((d) => typeof d === 'string')) {
      return void res.status(400).json({ message: 'invalid request: documents must be a non-empty list of strings' });
    }
    if (topN !== undefined && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 1)) {
      return void res.status(400).json({ message: 'invalid request: top_n must be a positive integer' });
    }
    const scores = lexicalScores(query, documents as string[]);
    if (k.bareRerank) {
      return void res.json({ id: crypto.randomUUID(), results: scores.map((relevance_score, index) => ({ index, relevance_score })), meta: {} });
    }
    const results = scores
      .map((relevance_score, index) => ({ index, relevance_score }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, topN ?? documents.length);
    res.json({
      id: crypto.randomUUID(),
      results,
      meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(documents.length / 100) } },
    });
  });
  return r;
}
