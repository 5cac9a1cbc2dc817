// The package's entry (`import { runSuites } from 'tmi-conform'`): the compiled library in dist/
// when it was compiled from exactly the sources beside it (scripts/compiled.mjs), else the
// TypeScript, which tsx loads into a namespace of its own, so that the importing program's own
// module loading is left as it was. The types are in dist/ (npm run build:types, run by npm pack).
import { tsImport } from 'tsx/esm/api';
import { isCompiledUpToDate, kitModule } from '../scripts/compiled.mjs';

// module-state: the package's entry: the library, loaded once by whoever imports the package.
const api = isCompiledUpToDate() ? await import(kitModule('api/index.ts', true)) : await tsImport('./index.ts', import.meta.url);

export const { runSuites, judgeRecording, startProxy, loadReport, loadBaseline, writeReports, conformanceDispatcher } = api;
