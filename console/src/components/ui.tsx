import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { href } from '../router.js';
import { totalText, type Counted } from '../count-text.js';

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

export function Panel(props: { title: string; children: ComponentChildren; id?: string }) {
  const headingId = useId();
  return (
    <section class="panel" aria-labelledby={headingId} id={props.id}>
      <h2 id={headingId}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** Loading, failure or content, announced to screen readers as it changes. */
export function Status(props: { loading?: boolean; error?: string | undefined; empty?: boolean; emptyText?: string }) {
  if (props.error) {
    return (
      <p class="error" role="alert">
        {props.error}
      </p>
    );
  }
  if (props.loading) {
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  }
  if (props.empty) return <p class="muted">{props.emptyText ?? 'Nothing here yet.'}</p>;
  return null;
}

/**
 * The result of an action: an error (role alert), with a link to the failed request's trace when
 * the API answered one (until 2026-12-07 a failed action showed none), or its answer (role
 * status), green unless `tone` is `declined` (the request worked but what it asked for was
 * refused, as a declined card swipe).
 */
export function Outcome(props: { error: string | undefined; traceId?: string | undefined; children?: ComponentChildren; tone?: 'declined' }) {
  if (props.error) {
    return (
      <p class="error" role="alert">
        {props.error}
        {props.traceId ? (
          <>
            {' '}
            <TraceLink traceId={props.traceId} />
          </>
        ) : null}
      </p>
    );
  }
  return props.children ? (
    <div class={props.tone === 'declined' ? 'declined' : 'success'} role="status">
      {props.children}
    </div>
  ) : null;
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'label' | 'onInput' | 'value'> & {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
};

/** A text input with its visible label (and hint) tied to it. */
export function Field({ label, value, onValue, hint, ...rest }: InputProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} aria-describedby={hintId} onInput={(event) => onValue(event.currentTarget.value)} {...rest} />
      {hint ? (
        <small id={hintId} class="muted">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

export function Select(props: { label: string; value: string; onValue: (value: string) => void; options: readonly (string | { value: string; label: string })[]; required?: boolean }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} required={props.required} onChange={(event) => props.onValue(event.currentTarget.value)}>
        {props.options.map((option) => {
          const { value, label } = typeof option === 'string' ? { value: option, label: option === '' ? 'Any' : option } : option;
          return (
            <option key={value} value={value}>
              {label}
            </option>
          );
        })}
      </select>
    </div>
  );
}

/** A form that calls `onSubmit` without reloading the page; Enter in any field submits it. */
export function Form(props: { label: string; onSubmit: () => void; children: ComponentChildren; class?: string }) {
  return (
    <form
      class={props.class ?? 'form'}
      aria-label={props.label}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}

/**
 * A filter of one choice: a select ("Any" first) and an Apply button. The choice takes effect on
 * Apply: `onApply` gets the chosen value ('' for any).
 */
export function SelectFilter(props: { formLabel: string; label: string; options: readonly string[]; onApply: (value: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <Form label={props.formLabel} class="filters" onSubmit={() => props.onApply(value)}>
      <Select label={props.label} value={value} onValue={setValue} options={['', ...props.options]} />
      <button type="submit">Apply</button>
    </Form>
  );
}

export function Link(props: { to: [section: string, id?: string, query?: Record<string, string | undefined>]; children: ComponentChildren; class?: string }) {
  const [section, id, query] = props.to;
  return (
    <a href={href(section, id, query)} class={props.class}>
      {props.children}
    </a>
  );
}

/**
 * A table with a name and column headers; its rows are the children (the body). It sits in its own
 * scrolling box, so a table wider than a narrow screen scrolls there instead of widening the page.
 */
export function Table(props: { label: string; columns: readonly string[]; class?: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table aria-label={props.label} class={props.class}>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * Parent/child trees: one disclosure per parent (open when there are five or fewer), its summary
 * line, and its children as a table inside. Used for the wallet history and card transactions.
 */
export function Tree<G>(props: {
  label: string;
  groups: readonly G[];
  keyOf: (group: G) => string;
  summary: (group: G) => ComponentChildren;
  children: (group: G) => ComponentChildren;
  emptyText: string;
}) {
  if (props.groups.length === 0) return <p class="muted">{props.emptyText}</p>;
  return (
    <ul class="tree" aria-label={props.label}>
      {props.groups.map((group) => (
        <li key={props.keyOf(group)}>
          <details open={props.groups.length <= 5}>
            <summary>{props.summary(group)}</summary>
            {props.children(group)}
          </details>
        </li>
      ))}
    </ul>
  );
}

/** Whether `value` is one of `values`: narrows a filter's chosen string to the API's enumeration. */
export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** An id cut to its first 8 and last 4 characters (a UUIDv7's first 8 are its time, alike for ids made together). */
export function shortId(value: string): string {
  return value.length > 14 ? `${value.slice(0, 8)}…${value.slice(-4)}` : value;
}

/** A long id shown short (first and last characters), the whole id in its title and accessible name. */
export function Id(props: { value: string | null | undefined }) {
  if (!props.value) return <span class="muted">—</span>;
  const value = props.value;
  const short = shortId(value);
  return (
    <code class="id" title={value} aria-label={value}>
      {short}
    </code>
  );
}

export function Time(props: { value: string | null | undefined }) {
  if (!props.value) return <span class="muted">—</span>;
  const date = new Date(props.value);
  return (
    <time dateTime={props.value} title={props.value}>
      {date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')}
    </time>
  );
}

const badgeTone: Record<string, string> = {
  APPROVED: 'good',
  PASSED: 'good',
  COMPLETED: 'good',
  DELIVERED: 'good',
  ACTIVE: 'good',
  SUCCESS: 'good',
  PENDING: 'wait',
  PENDING_COLLATERAL: 'wait',
  MANUAL_REVIEW: 'wait',
  FAILED: 'bad',
  DECLINED: 'bad',
  DENIED_COMPLIANCE: 'bad',
  DENIED_IDENTITY_THEFT: 'bad',
  CANCELLED: 'bad',
  ERROR: 'bad',
  DISABLED: 'bad',
};

export function Badge(props: { value: string | null | undefined }) {
  if (!props.value) return <span class="muted">—</span>;
  return <span class={`badge ${badgeTone[props.value] ?? ''}`}>{props.value}</span>;
}

export function Amount(props: { amount: string; asset: string; operation?: string }) {
  // Nothing moved (a declined card message): no sign, no colour.
  const operation = /^-?0*(\.0*)?$/.test(props.amount) ? undefined : props.operation;
  const sign = operation === 'DEBIT' ? '−' : operation === 'CREDIT' ? '+' : '';
  return (
    <span class={`amount ${operation === 'DEBIT' ? 'debit' : operation === 'CREDIT' ? 'credit' : ''}`}>
      {sign}
      {props.amount} {props.asset}
    </span>
  );
}

export function Json(props: { value: unknown; label?: string }) {
  return (
    <details class="json">
      <summary>{props.label ?? 'Show JSON'}</summary>
      <pre>{JSON.stringify(props.value, null, 2)}</pre>
    </details>
  );
}

/** Keys and values of a record, as a description list. */
export function Facts(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value ?? <span class="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * An action that asks first, in place: what it will do, the button that does it, and "Keep it",
 * which sends nothing (cancelling a card, returning a settled payment). `label` names the group
 * to assistive technology; `confirmLabel` and `keepLabel` name the buttons where their text
 * alone would not say which row they act on.
 */
export function ConfirmInPlace(props: {
  label: string;
  warning: string;
  confirm: string;
  busy: boolean;
  onConfirm: () => void;
  onKeep: () => void;
  confirmLabel?: string;
  keepLabel?: string;
}) {
  return (
    <div class="actions" role="group" aria-label={props.label}>
      <p>{props.warning}</p>
      <button type="button" onClick={props.onConfirm} disabled={props.busy} aria-label={props.confirmLabel}>
        {props.confirm}
      </button>
      <button type="button" class="secondary" onClick={props.onKeep} aria-label={props.keepLabel}>
        Keep it
      </button>
    </div>
  );
}

/** How many rows of how many a paged list shows, and its "Load more". */
export function Shown(props: { list: { items: unknown[]; total: string; hasMore: boolean } | undefined; noun: string; onMore: () => void; busy: boolean }) {
  if (!props.list || props.list.items.length === 0) return null;
  return (
    <p class="muted">
      {props.list.items.length} of {props.list.total} {props.noun} shown. <More hasMore={props.list.hasMore} onMore={props.onMore} busy={props.busy} />
    </p>
  );
}

/** Under a list cut to its newest rows (a history, a log): how many of how many it shows, when not all. */
export function NewestShown(props: { shown: number; of: Counted; noun: string }) {
  if (props.of.totalResultsExact && props.of.totalResults <= props.shown) return null;
  return (
    <p class="muted">
      The newest {props.shown} of {totalText(props.of)} {props.noun} are shown.
    </p>
  );
}

/**
 * "Load more" for cursor pagination. While a load runs it says so with `aria-disabled` and ignores
 * presses, but stays focusable: a disabled button loses the keyboard focus, and the lists poll every
 * few seconds (until 2026-12-07 each poll took the focus away).
 */
export function More(props: { hasMore: boolean; onMore: () => void; busy?: boolean }) {
  // Pressed with the keyboard focus on it: when the last page has come and the button goes, the
  // focus goes to the sentence that says how many are shown, not to the page's body (until the
  // thirty-fourth session it was lost; found by an audit).
  const pressedWithFocus = useRef(false);
  const end = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (props.hasMore || !pressedWithFocus.current) return;
    pressedWithFocus.current = false;
    const sentence = end.current?.parentElement;
    if (!sentence || (document.activeElement !== null && document.activeElement !== document.body)) return;
    sentence.setAttribute('tabindex', '-1');
    sentence.focus();
  }, [props.hasMore]);
  if (!props.hasMore) return <span ref={end} />;
  return (
    <button
      type="button"
      class="secondary"
      aria-disabled={props.busy ? 'true' : undefined}
      onClick={(event) => {
        pressedWithFocus.current = document.activeElement === event.currentTarget;
        if (!props.busy) props.onMore();
      }}
    >
      Load more
    </button>
  );
}

/** A link to a trace's timeline; `label` names it for assistive technology when its text is short. */
export function TraceLink(props: { traceId: string | null | undefined; children?: ComponentChildren; label?: string }) {
  if (!props.traceId) return null;
  return (
    <a href={href('traces', props.traceId)} class="trace-link" {...(props.label ? { 'aria-label': props.label } : {})}>
      {props.children ?? 'Open trace'}
    </a>
  );
}

/**
 * The action POST /v1/webhooks/deliveries/:id/retry takes on a delivery of this status
 * (docs/webhooks.md): a waiting one is sent now, a delivered one replayed, a failed or cancelled
 * one retried. The delivery log and the trace timeline offer it alike.
 */
export function retryActionOf(status: string): string {
  if (status === 'PENDING') return 'Send now';
  return status === 'DELIVERED' ? 'Replay' : 'Retry';
}
