import { type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';
import { AppError } from './core/errors.js';

/**
 * Our spans. Until tracing is started (src/http/tracing.ts) there are none: `inSpan` runs its work
 * alone when OTEL_EXPORTER_OTLP_ENDPOINT is not set.
 */
export const tracer = trace.getTracer('anchorage');

/** Whether spans are recorded: set by `startTracing` (src/http/tracing.ts) once its provider is registered. */
let recording = false;

export function recordSpans(): void {
  recording = true;
}

/**
 * Runs `work` in a child span of the active one; a failure marks the span (an error code, or the
 * exception). Without tracing, `work` alone: the no-op span still cost every request a context, a
 * wrapper and its promise (3 % of what a `getArticle` allocated).
 */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  if (!recording) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) span.setAttribute('anchorage.error', error.code);
      else span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
