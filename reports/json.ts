// report.json: the model itself.
import type { Report } from './model.ts';

export function renderJson(report: Report): string {
  return JSON.stringify(report, null, 2) + '\n';
}
