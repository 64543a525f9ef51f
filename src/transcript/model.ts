/** "cursor-acp/gpt-5" → "gpt-5": the anchor names the concrete Cursor model, not the provider's alias. */
export function concreteModel(model: string): string {
  const match = /^[A-Za-z0-9_.-]+\/(.+)$/.exec(model);
  return match ? match[1]! : model;
}
