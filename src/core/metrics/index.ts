export { METRICS_PATH, metricsRoute } from './route.ts';
export { METRICS_CONTENT_TYPE, SealpostMetrics, type SealpostMetricsOptions } from './sealpost-metrics.ts';
export {
  type PipelineMetrics,
  type SmtpMetrics,
  type SmtpPhase,
  type StageName,
  timeStage,
} from './types.ts';
