// What every report has, whoever made it (the builder or `report merge`): the tool that made
// it, the summary and the verdict taken at `failOn` from the requirements (none when a source
// was interrupted: `passed` is false), and the same requirements grouped per operation.
import { version } from '../core/version.ts';
import type { FailOn } from './fail-on.ts';
import type { Report } from './model.ts';
import { groupByOperation } from './operations.ts';
import { summarize, verdict } from './status.ts';

type Parts = Pick<Report, 'kind' | 'startedAt' | 'finishedAt' | 'sources' | 'requirements' | 'tests' | 'clientFindings'>;

export function assembleReport({ kind, startedAt, finishedAt, sources, requirements, tests, clientFindings }: Parts, failOn: FailOn): Report {
  const summary = summarize(requirements);
  const interrupted = sources.some((s) => s.interrupted === true);
  return {
    schemaVersion: 1,
    tool: { name: 'tmi-conform', version },
    kind,
    startedAt,
    finishedAt,
    sources,
    summary,
    passed: !interrupted && verdict(summary, failOn),
    ...(interrupted ? { interrupted: true as const } : {}),
    failOn,
    requirements,
    operations: groupByOperation(requirements),
    tests,
    clientFindings,
  };
}
