// The theme is applied before the first paint by an inline script in the root layout
// (app/layout.tsx): the choice kept in localStorage, else the system's.
//
// Kept out of theme-toggle.tsx on purpose: a value exported by a 'use client' module reaches a
// server component as a client reference, not as the string. The script in <head> then waited
// in the browser for that module's chunk, and when the chunk arrived while React was hydrating
// <head>, React (19.3) resumed <head> in a way that lost its place in the document and failed
// to hydrate the whole page (#418, now and then, on slow loads). As a plain string here it is
// in the page's payload itself and nothing in <head> waits.
export const THEME_KEY = 'leasehold-theme';

export const THEME_SCRIPT = `try{var t=localStorage.getItem('${THEME_KEY}');if(t!=='light'&&t!=='dark')t=matchMedia('(prefers-color-scheme: dark)').matches?'dark':'light';document.documentElement.dataset.theme=t}catch(e){}`;
