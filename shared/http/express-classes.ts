import http from 'http';
import type { Express } from 'express';

/**
 * The request and response classes a server of an express app constructs its `req` and `res` with,
 * so that they are born with the prototypes express would give them.
 *
 * Express gives every `req` and `res` its app's prototypes (`app.request`, `app.response`) with
 * `Object.setPrototypeOf` as it takes the request. V8 (Node 20) never shares the map of an object
 * whose prototype was changed once a property is added to it afterwards: every property express, the
 * body parser and the gateway's middleware add to `req` or `res` (params, body, locals, auth ...) then
 * copies that object's map and its whole descriptor array (about 1 KB for a response), so no two
 * requests share a hidden class. That is garbage at every property added, a map of their own held by
 * every open request, and inline caches on `req` and `res` that meet a new map at every request.
 *
 * Here each class is a subclass of node's own (so V8 sizes its objects from node's constructors and
 * keeps their properties fast) whose prototype object is put between the class and the app's
 * prototype, and the app is told to use it: express's `setPrototypeOf` then sets the prototype the
 * object already has, which changes nothing, and every request shares its maps
 * (docs/benchmark.md, seventh session). An express app mounted inside this one would change the
 * prototypes again for its requests; the inference and admin apps mount routers only.
 */
export function expressClasses(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  class GatewayRequest extends http.IncomingMessage {}
  class GatewayResponse extends http.ServerResponse {}
  Object.setPrototypeOf(GatewayRequest.prototype, app.request);
  Object.setPrototypeOf(GatewayResponse.prototype, app.response);
  app.request = GatewayRequest.prototype as unknown as Express['request'];
  app.response = GatewayResponse.prototype as unknown as Express['response'];
  return { IncomingMessage: GatewayRequest, ServerResponse: GatewayResponse as unknown as typeof http.ServerResponse };
}
