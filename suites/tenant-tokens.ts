// Inside the suite worker: every token the suites send is settled against what the run learned
// of the tenant's tokens when it started (keys/tenant.ts: the issuer and the keys, each from the
// config, the tenant's discovery document or its tokens). Imported once, by context.ts.
import { inject } from 'vitest';
import { TenantTokens, type TenantTokensData } from '../keys/tenant.ts';
import { judgeTokensWith } from './http.ts';

declare module 'vitest' {
  interface ProvidedContext {
    /** What the run learned of the tenant's tokens (null: nothing, and the run said so). */
    tmiTenant: TenantTokensData | null;
  }
}

judgeTokensWith(TenantTokens.fromData(inject('tmiTenant')));
