import { useEffect, useState } from 'preact/hooks';

/** The part of the location after `#`, without the leading slash: `customers/01…`. */
function currentRoute(): string {
  return window.location.hash.replace(/^#\/?/, '');
}

/** Hash routing: the page is `#/<section>/<id>?<query>`; the hook re-renders on every change. */
export function useRoute(): { section: string; id: string | undefined; query: URLSearchParams } {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => setRoute(currentRoute());
    window.addEventListener('hashchange', onChange);
    // Effects run after the next frame: an address change between the first render and now fired
    // no listener, so the route is read again once listening.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  const [path = '', search = ''] = route.split('?');
  const [section = '', id] = path.split('/');
  return { section, id: id ? decodeURIComponent(id) : undefined, query: new URLSearchParams(search) };
}

/** The href of a page of the console. */
export function href(section: string, id?: string, query?: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')).toString();
  return `#/${section}${id ? `/${encodeURIComponent(id)}` : ''}${search ? `?${search}` : ''}`;
}

export function navigate(to: string): void {
  window.location.hash = to;
}
