//! The wallet's lifecycle as a pure state machine (issue 12): locked/unlocked, create, unlock,
//! lock, open the editor, save the profile, import, and the person's decisions, each returning
//! the effects the page must carry out. Being written; see the module's tests.
