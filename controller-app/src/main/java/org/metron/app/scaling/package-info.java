/**
 * Elastic scaling of traffic-class groups (docs/scaling.md): {@link org.metron.app.scaling.LoadMonitor} (one
 * load subscription per server) feeds {@link org.metron.app.scaling.ScalingPolicy} (pure: EWMA, hysteresis,
 * cooldown, min/max cores), whose decisions {@link org.metron.app.scaling.ScalingExecutor} carries out hitlessly
 * (split: clone state, re-tag, merge the window's state; merge: the reverse), journaling every step in
 * {@link org.metron.app.scaling.ScalingStore} so a restarted controller completes or rolls back. Each kind of
 * operation is a small class ({@link org.metron.app.scaling.SplitOperation}, {@link org.metron.app.scaling.ScaleOut},
 * {@link org.metron.app.scaling.MergeOperation}, {@link org.metron.app.scaling.LostServerMerge},
 * {@link org.metron.app.scaling.JournalRecovery}) run by one {@link org.metron.app.scaling.OperationRunner}.
 */
package org.metron.app.scaling;
