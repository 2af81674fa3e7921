/*===- read_file.h - A whole file for the C API test programs -------------===*/

#ifndef FLY_TEST_CAPI_READ_FILE_H
#define FLY_TEST_CAPI_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes, NUL-terminated (caller frees), or NULL. */
static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc((size_t)n + 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(data);
    return NULL;
  }
  data[n] = 0;
  fclose(f);
  *size = (size_t)n;
  return data;
}

#endif /* FLY_TEST_CAPI_READ_FILE_H */
