import type { Actor, RequestInfo } from '../services/actor.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the credential has been checked. */
    actor: Actor | null;
    /** The call as the activity log records it. */
    info: RequestInfo;
    /** The `error` identifier of the response, when it is an Error body. */
    errorCode: string | null;
  }
}
