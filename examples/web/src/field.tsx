/** A labelled input with its problem beside it: the service's message for that field, and aria-invalid. */
import type { ReactNode } from 'react';

type FieldProps = {
  id: string;
  name: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  placeholder?: string;
  inputMode?: 'numeric';
  children?: ReactNode;
};

export function Field({ id, name, label, value, onChange, error, placeholder, inputMode, children }: FieldProps) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        value={value}
        placeholder={placeholder}
        inputMode={inputMode}
        aria-invalid={error !== undefined}
        aria-describedby={`${id}-error`}
        onChange={(event) => onChange(event.target.value)}
      />
      {children}
      <span className="error" id={`${id}-error`} data-error-for={name}>
        {error ?? ''}
      </span>
    </div>
  );
}
