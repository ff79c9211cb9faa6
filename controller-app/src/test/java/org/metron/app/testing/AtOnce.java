package org.metron.app.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Runs tasks as callers that notice the same event at once do: one thread each, all waiting on one latch that
 * releases them together once every thread waits on it.
 */
public final class AtOnce {
    private AtOnce() {
    }

    /**
     * Runs {@code tasks} at once and waits up to {@code wait} for all of them.
     *
     * @return each task's result or failure, in the order of {@code tasks}
     */
    public static <T> List<CompletableFuture<T>> run(Duration wait, List<Callable<T>> tasks)
            throws InterruptedException {
        CountDownLatch ready = new CountDownLatch(tasks.size());
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<T>> out = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            Callable<T> task = tasks.get(i);
            CompletableFuture<T> f = new CompletableFuture<>();
            out.add(f);
            Thread t = new Thread(() -> {
                try {
                    ready.countDown();
                    go.await();
                    f.complete(task.call());
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            }, "at-once-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        if (!ready.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the threads did not start within " + wait);
        }
        go.countDown();
        long deadline = System.nanoTime() + wait.toNanos();
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " still runs after " + wait);
            }
        }
        return out;
    }

    /** The failures among {@code results}, each as its exception's message (empty when none failed). */
    public static List<String> failures(List<? extends CompletableFuture<?>> results) {
        return results.stream().filter(CompletableFuture::isCompletedExceptionally).map(f -> {
            try {
                f.join();
                return "";
            } catch (CompletionException e) {
                return String.valueOf(e.getCause());
            }
        }).collect(Collectors.toList());
    }
}
