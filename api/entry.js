// The package's entry (`import { runSuites } from 'tmi-conform'`). The kit ships as TypeScript:
// tsx loads it into a namespace of its own, so the importing program's own module loading is
// left as it was. The types are in dist/ (npm run build:types, run by npm pack).
import { tsImport } from 'tsx/esm/api';

// module-state: the package's entry: the library, loaded once by whoever imports the package.
const api = await tsImport('./index.ts', import.meta.url);

export const { runSuites, judgeRecording, startProxy, loadReport, loadBaseline, writeReports, conformanceDispatcher } = api;
