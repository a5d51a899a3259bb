/*
 * The folder tree of a mount: nodes made from normalised entry names.
 * While it is built, a folder's children are found through a hash index
 * (adding n entries costs O(n)); then they are sorted once, so readdir
 * lists them in order and a lookup bisects each level.
 */
#include "mount.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static mount_node *new_node(const char *name, size_t len, bool is_dir)
{
    mount_node *n = calloc(1, sizeof *n);
    char *copy = n ? malloc(len + 1) : NULL;
    if (!copy) {
        free(n);
        return NULL;
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    n->name = copy;
    n->is_dir = is_dir;
    n->expanded = true; /* only folders given an expand step start false */
    return n;
}

mount_node *mount_tree_dir(const char *name)
{
    return new_node(name, strlen(name), true);
}

/* Folders with fewer children than this are searched by a scan. */
#define INDEX_FROM 16

static size_t hash_name(const char *name, size_t len)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 1099511628211u;
    return (size_t)h;
}

static bool same_name(const mount_node *c, const char *name, size_t len)
{
    return strncmp(c->name, name, len) == 0 && c->name[len] == '\0';
}

/* The child named name[0, len) of dir, while the tree is being built (the
 * children are not sorted yet): through the index, or a scan of a small
 * folder. */
static mount_node *find_child_unsorted(const mount_node *dir, const char *name, size_t len)
{
    if (!dir->index) {
        for (size_t i = 0; i < dir->child_count; i++)
            if (same_name(dir->children[i], name, len))
                return dir->children[i];
        return NULL;
    }
    size_t mask = dir->index_cap - 1;
    for (size_t i = hash_name(name, len) & mask; dir->index[i]; i = (i + 1) & mask)
        if (same_name(dir->index[i], name, len))
            return dir->index[i];
    return NULL;
}

static void index_put(mount_node **index, size_t cap, mount_node *child)
{
    size_t mask = cap - 1, i = hash_name(child->name, strlen(child->name)) & mask;
    while (index[i])
        i = (i + 1) & mask;
    index[i] = child;
}

/* Makes room in dir's index for one more child (building it once the
 * folder is no longer small). */
static bool index_reserve(mount_node *dir)
{
    size_t want = dir->child_count + 1;
    if (want < INDEX_FROM || want * 2 <= dir->index_cap)
        return true;
    size_t cap = dir->index_cap ? dir->index_cap * 2 : 2 * INDEX_FROM;
    while (want * 2 > cap)
        cap *= 2;
    mount_node **index = calloc(cap, sizeof *index);
    if (!index)
        return false;
    for (size_t i = 0; i < dir->child_count; i++)
        index_put(index, cap, dir->children[i]);
    free(dir->index);
    dir->index = index;
    dir->index_cap = cap;
    return true;
}

static bool append_child(mount_node *dir, mount_node *child)
{
    if (dir->child_count == dir->child_cap) {
        size_t cap = dir->child_cap ? dir->child_cap * 2 : 8;
        mount_node **c = realloc(dir->children, cap * sizeof *c);
        if (!c)
            return false;
        dir->children = c;
        dir->child_cap = cap;
    }
    if (!index_reserve(dir))
        return false;
    child->parent = dir;
    dir->children[dir->child_count++] = child;
    if (dir->index)
        index_put(dir->index, dir->index_cap, child);
    return true;
}

/* The folder name[0, len) inside dir, made if missing; NULL with *err set. */
static mount_node *step_into(mount_node *dir, const char *name, size_t len, int *err)
{
    mount_node *c = find_child_unsorted(dir, name, len);
    if (c) {
        if (!c->is_dir)
            *err = EEXIST;
        return c->is_dir ? c : NULL;
    }
    c = new_node(name, len, true);
    if (!c || !append_child(dir, c)) {
        mount_tree_free(c);
        *err = ENOMEM;
        return NULL;
    }
    return c;
}

mount_node *mount_tree_new_dir(mount_node *dir, const char *name)
{
    if (find_child_unsorted(dir, name, strlen(name)))
        return NULL;
    mount_node *c = new_node(name, strlen(name), true);
    if (!c || !append_child(dir, c)) {
        mount_tree_free(c);
        return NULL;
    }
    return c;
}

mount_node *mount_tree_add_dir(mount_node *dir, const char *name)
{
    int err = 0;
    return step_into(dir, name, strlen(name), &err);
}

mount_node *mount_tree_add_dir_path(mount_node *root, const char *path)
{
    mount_node *dir = root;
    int err = 0;
    while (dir && *path) {
        size_t len = strcspn(path, "/");
        if (len > 0)
            dir = step_into(dir, path, len, &err);
        path += len;
        path += *path == '/';
    }
    return dir;
}

int mount_tree_add_file(mount_node *root, const char *path, mount_node **out)
{
    *out = NULL;
    mount_node *dir = root;
    const char *slash;
    int err = 0;
    while ((slash = strchr(path, '/')) != NULL) {
        if (slash > path && !(dir = step_into(dir, path, (size_t)(slash - path), &err)))
            return err;
        path = slash + 1;
    }
    if (!*path || find_child_unsorted(dir, path, strlen(path)))
        return EEXIST; /* as extract: the first entry of a name wins */
    mount_node *f = new_node(path, strlen(path), false);
    if (!f || !append_child(dir, f)) {
        mount_tree_free(f);
        return ENOMEM;
    }
    *out = f;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const mount_node *x = *(const mount_node *const *)a, *y = *(const mount_node *const *)b;
    return strcmp(x->name, y->name);
}

void mount_tree_sort(mount_node *root)
{
    if (!root->is_dir)
        return;
    if (root->child_count > 1)
        qsort(root->children, root->child_count, sizeof *root->children, by_name);
    for (size_t i = 0; i < root->child_count; i++)
        mount_tree_sort(root->children[i]);
}

static mount_node *find_child(const mount_node *dir, const char *name, size_t len)
{
    size_t lo = 0, hi = dir->child_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *c = dir->children[mid]->name;
        int cmp = strncmp(c, name, len);
        if (cmp == 0 && c[len] != '\0')
            cmp = 1; /* c is longer: it sorts after name */
        if (cmp == 0)
            return dir->children[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

mount_node *mount_tree_lookup(mount_node *root, const char *path,
                              void (*expand)(void *user, mount_node *dir), void *user)
{
    mount_node *n = root;
    while (n) {
        while (*path == '/')
            path++;
        if (!*path)
            return n;
        if (!n->is_dir)
            return NULL;
        if (!n->expanded && expand)
            expand(user, n);
        size_t len = strcspn(path, "/");
        n = find_child(n, path, len);
        path += len;
    }
    return NULL;
}

bool mount_tree_path(const mount_node *node, char *buf, size_t cap)
{
    size_t need = 0;
    for (const mount_node *n = node; n && n->parent; n = n->parent)
        need += strlen(n->name) + 1;
    if (need == 0 || need > cap)
        return need == 0 && cap > 0 ? (buf[0] = '\0', true) : false;
    size_t end = need - 1;
    buf[end] = '\0';
    for (const mount_node *n = node; n && n->parent; n = n->parent) {
        size_t len = strlen(n->name);
        end -= len;
        memcpy(buf + end, n->name, len);
        if (end > 0)
            buf[--end] = '/';
    }
    return true;
}

void mount_tree_free(mount_node *root)
{
    if (!root)
        return;
    for (size_t i = 0; i < root->child_count; i++)
        mount_tree_free(root->children[i]);
    free(root->children);
    free(root->index);
    free(root->name);
    free(root);
}
