//! A growable array of plain values whose layout is fixed (`repr(C)`:
//! the buffer's address, the length, the capacity, each a word), so that
//! native code can read its length and buffer, and push while there is
//! room, as the interpreter does through its methods. The heap and the
//! trail are such stacks (see "Native code" in the engine's README).
//!
//! It keeps what `Vec` keeps, and takes its buffer from `Vec` whenever it
//! grows or shrinks, so the memory is `Vec`'s.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

#[repr(C)]
pub struct Stack<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
}

// SAFETY: a `Stack` owns its buffer as a `Vec<T>` would.
unsafe impl<T: Copy + Send> Send for Stack<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Copy + Sync> Sync for Stack<T> {}

/// Where a `Stack`'s fields are, for native code.
#[cfg_attr(not(feature = "native"), allow(dead_code))]
pub const PTR: i32 = 0;
#[cfg_attr(not(feature = "native"), allow(dead_code))]
pub const LEN: i32 = 8;
#[cfg_attr(not(feature = "native"), allow(dead_code))]
pub const CAP: i32 = 16;

impl<T: Copy> Default for Stack<T> {
    fn default() -> Self {
        Stack::new()
    }
}

impl<T: Copy> Stack<T> {
    pub const fn new() -> Self {
        Stack { ptr: NonNull::dangling(), len: 0, cap: 0 }
    }

    pub fn with_capacity(n: usize) -> Self {
        let mut s = Stack::new();
        s.reserve(n);
        s
    }

    /// Runs `f` on the buffer as a `Vec`, and keeps what it leaves.
    fn with_vec<R>(&mut self, f: impl FnOnce(&mut Vec<T>) -> R) -> R {
        let (ptr, len, cap) = (self.ptr, self.len, self.cap);
        // Empty while the `Vec` holds the buffer: a panic in `f` frees it
        // once, with the `Vec`. (Fields set one by one: assigning a whole
        // `Stack` would drop this one.)
        self.ptr = NonNull::dangling();
        self.len = 0;
        self.cap = 0;
        // SAFETY: the three came from a `Vec<T>` (or are `Vec::new()`'s),
        // and `len` elements are initialised.
        let mut v = unsafe { Vec::from_raw_parts(ptr.as_ptr(), len, cap) };
        let r = f(&mut v);
        let mut v = ManuallyDrop::new(v);
        // SAFETY: a `Vec`'s buffer is never null.
        self.ptr = unsafe { NonNull::new_unchecked(v.as_mut_ptr()) };
        self.len = v.len();
        self.cap = v.capacity();
        r
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.cap
    }

    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if self.len == self.cap {
            self.grow(1);
        }
        // SAFETY: `len < cap`: the slot is inside the buffer.
        unsafe { self.ptr.as_ptr().add(self.len).write(v) };
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        self.with_vec(|v| v.reserve(n));
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: the element was initialised.
        Some(unsafe { self.ptr.as_ptr().add(self.len).read() })
    }

    #[inline(always)]
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    pub fn extend_from_slice(&mut self, s: &[T]) {
        if self.cap - self.len < s.len() {
            self.grow(s.len());
        }
        // SAFETY: there is room for `s` past `len`, and `s` cannot be
        // inside this stack's spare room (it is borrowed separately).
        unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), self.ptr.as_ptr().add(self.len), s.len()) };
        self.len += s.len();
    }

    /// Appends `n` elements, the `i`th `f(i)`: room is made once, and
    /// each element written in place (no check of room an element).
    #[inline(always)]
    pub fn extend_with(&mut self, n: usize, mut f: impl FnMut(usize) -> T) {
        self.reserve(n);
        // SAFETY: there is room for `n` elements past `len`. Were `f` to
        // panic, `len` is as it was and the elements written are `Copy`.
        let p = unsafe { self.ptr.as_ptr().add(self.len) };
        for i in 0..n {
            unsafe { p.add(i).write(f(i)) };
        }
        self.len += n;
    }

    pub fn extend_from_within(&mut self, r: std::ops::Range<usize>) {
        self.with_vec(|v| v.extend_from_within(r));
    }

    #[inline]
    pub fn resize(&mut self, n: usize, v: T) {
        if n <= self.len {
            self.len = n;
            return;
        }
        if self.cap < n {
            self.grow(n - self.len);
        }
        for i in self.len..n {
            // SAFETY: `i < n <= cap`.
            unsafe { self.ptr.as_ptr().add(i).write(v) };
        }
        self.len = n;
    }

    pub fn reserve(&mut self, n: usize) {
        if self.cap - self.len < n {
            self.grow(n);
        }
    }

    pub fn shrink_to(&mut self, n: usize) {
        self.with_vec(|v| v.shrink_to(n));
    }
}

impl<T: Copy> Drop for Stack<T> {
    fn drop(&mut self) {
        self.with_vec(std::mem::take);
    }
}

impl<T: Copy> Deref for Stack<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` elements are initialised.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for Stack<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for Stack<T> {
    fn clone(&self) -> Self {
        let mut s = Stack::with_capacity(self.len);
        s.extend_from_slice(self);
        s
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Stack<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack does what a `Vec` does, through growth and shrinking, and
    /// its fields are where native code reads them.
    #[test]
    fn a_stack_is_a_vec() {
        let mut s: Stack<u64> = Stack::new();
        let mut v: Vec<u64> = Vec::new();
        for i in 0..1000u64 {
            s.push(i);
            v.push(i);
            if i % 7 == 0 {
                assert_eq!(s.pop(), v.pop());
            }
            if i % 100 == 50 {
                s.extend_from_slice(&[1, 2, 3]);
                v.extend_from_slice(&[1, 2, 3]);
                s.extend_from_within(3..9);
                v.extend_from_within(3..9);
                s.resize(s.len() + 5, 9);
                v.resize(v.len() + 5, 9);
                s.extend_with(4, |k| i + k as u64);
                v.extend((0..4).map(|k| i + k));
            }
            assert_eq!(&s[..], &v[..]);
        }
        s.truncate(10);
        v.truncate(10);
        s.shrink_to(0);
        assert_eq!(&s[..], &v[..]);
        assert!(s.capacity() >= 10);
        s.resize(4, 0);
        v.resize(4, 0);
        assert_eq!(&s.clone()[..], &v[..]);
        s.clear();
        assert!(s.is_empty() && s.pop().is_none());
        let p = &s as *const Stack<u64> as *const usize;
        // SAFETY: reading the three words of a `repr(C)` struct.
        unsafe {
            assert_eq!(p.byte_add(PTR as usize).read(), s.as_ptr() as usize);
            assert_eq!(p.byte_add(LEN as usize).read(), s.len());
            assert_eq!(p.byte_add(CAP as usize).read(), s.capacity());
        }
    }
}
