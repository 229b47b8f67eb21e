import type { Router } from 'express';

interface LayerLike {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: LayerLike[] };
}

/**
 * Every route of an express 5 router and its sub-routers with a method other than GET and HEAD,
 * as `METHOD /full/path` (params as `:name`): what a form can post to. Read from the router itself,
 * so a route added later is in the list without anyone writing it down.
 */
export function stateChangingRoutes(router: Router, prefix = ''): string[] {
  const out: string[] = [];
  for (const layer of (router as unknown as { stack: LayerLike[] }).stack) {
    const paths = [layer.route?.path ?? layer.rawPath ?? ''].flat();
    for (const p of paths) {
      const full = `${prefix}${p === '/' && !layer.route ? '' : p}`;
      if (layer.route) {
        for (const m of Object.keys(layer.route.methods)) if (!['get', 'head', '_all'].includes(m)) out.push(`${m.toUpperCase()} ${full}`);
      } else if (layer.handle?.stack) {
        out.push(...stateChangingRoutes(layer.handle as unknown as Router, full));
      }
    }
  }
  return [...new Set(out)];
}
