/** A line that says how something went; a failure is marked so it reads as one. */
export type Said = { text: string; failed?: boolean };

export function Message({ id, role, said }: { id: string; role: 'status' | 'alert'; said: Said | undefined }) {
  return (
    <p id={id} role={role} className={said?.failed === true ? 'failed' : undefined}>
      {said?.text ?? ''}
    </p>
  );
}
