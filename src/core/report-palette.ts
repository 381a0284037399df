/**
 * The colours of the report's series, one palette for the charts of the web report (Chart.js,
 * given them with the data) and of the PDF, so a client comparing the two sees the same chart.
 * The UI's badges use the same values (app.css `--industry`, `--local`, `--articles`).
 */
export const reportPalette = {
  industry: '#1d5fa8',
  local: '#23988b',
  articles: '#7446b8',
} as const;

export type ReportSeries = keyof typeof reportPalette;
