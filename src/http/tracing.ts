import { FastifyOtelInstrumentation } from '@fastify/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Settings } from '../config.js';

/** Set once tracing has started: the process has one tracer provider, shared by every listener. */
let instrumentation: FastifyOtelInstrumentation | undefined;

/**
 * Starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans go in batches to
 * the collector by OTLP over HTTP (JSON). The exporter reads the standard OTEL_EXPORTER_OTLP_*
 * variables itself (headers, timeout). Returns the flush-and-stop function, or undefined when off.
 */
export function startTracing(settings: Settings): (() => Promise<void>) | undefined {
  if (!settings.tracing) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? 'anchorage' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  instrumentation = new FastifyOtelInstrumentation({
    // Probes and scrapes would drown the traces.
    ignorePaths: (route) => route.url === '/healthz' || route.url === '/readyz' || route.url === '/metrics',
    requestHook: (span, request) => span.setAttribute('anchorage.request_id', request.id),
  });
  instrumentation.setTracerProvider(provider);
  return () => provider.shutdown();
}

/** The request span and its lifecycle spans (@fastify/otel), when tracing has started; register before routes. */
export const tracingPlugin = fp(async (app: FastifyInstance) => {
  if (instrumentation) await app.register(instrumentation.plugin());
});
