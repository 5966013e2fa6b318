// @shadowplane/budget: the CAS budget ledger (integer micro-USD). Named exports only.
export { BudgetLedgerClient, newLedger } from './budget-ledger.js';
export type { ReserveResult, SettleResult, SettleSelector, BudgetLedgerClientOptions } from './budget-ledger.js';
